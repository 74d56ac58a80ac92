"""``Slots``: holding a token of several capacity limiters for the length of a block."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import anyio


class Slots:
    """``async with Slots(limiters):`` takes a token of each limiter, in order, and gives them back after.

    A free token is taken at once (no checkpoint, so a call under every bound
    costs no extra loop pass); otherwise the task waits in line. A cancellation
    while waiting gives back the tokens taken so far and propagates. Tokens
    are held by the current task, so enter and leave in the same task.
    """

    __slots__ = ("_held", "_limiters")

    def __init__(self, limiters: Sequence[anyio.CapacityLimiter]) -> None:
        self._limiters = limiters
        self._held: list[anyio.CapacityLimiter] = []

    async def __aenter__(self) -> None:
        for limiter in self._limiters:
            try:
                limiter.acquire_nowait()
            except anyio.WouldBlock:
                try:
                    await limiter.acquire()
                except BaseException:
                    self._release()
                    raise
            self._held.append(limiter)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._release()

    def _release(self) -> None:
        while self._held:
            self._held.pop().release()
