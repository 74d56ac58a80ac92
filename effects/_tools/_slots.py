"""``Slots``: holding a token of several semaphores (or capacity limiters) for the length of a block;
``SessionSlots``: the slots of one session's tool calls (its own bound, then the process's)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TypeAlias

import anyio

from . import _process

Bound: TypeAlias = anyio.Semaphore | anyio.CapacityLimiter


class Slots:
    """``async with slots:`` takes a token of each bound, in order, and gives them back after.

    A free token is taken at once (no checkpoint, so a call under every bound
    costs no extra loop pass); otherwise the task waits in line. A cancellation
    while waiting gives back the tokens taken so far and propagates. The object
    keeps no state per call, so one instance serves any number of tasks at once
    (a limiter's token belongs to the task: enter and leave in the same one).
    """

    __slots__ = ("_limiters",)

    def __init__(self, limiters: Sequence[Bound]) -> None:
        self._limiters = tuple(limiters)

    async def __aenter__(self) -> None:
        taken = 0
        try:
            for limiter in self._limiters:
                try:
                    limiter.acquire_nowait()
                except anyio.WouldBlock:
                    await limiter.acquire()
                taken += 1
        except BaseException:
            for limiter in self._limiters[:taken]:
                limiter.release()
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for limiter in self._limiters:
            limiter.release()


class SessionSlots:
    """The :class:`Slots` of one session's tool calls: ``per_session`` of them at once, then the process's bound.

    Use it on one event loop (a session runs on one). The limiters are made on
    first use and kept until :func:`~effects.set_process_limits` replaces the
    process's: calls already inside keep the instance they entered.
    """

    __slots__ = ("_for", "_own", "_per_session", "_slots")

    def __init__(self, per_session: int | None) -> None:
        self._per_session = per_session
        self._own: anyio.Semaphore | None = None
        self._for: _process.Limiters | None = None
        self._slots = Slots(())

    def slot(self) -> Slots:
        """The slots a new call enters (``async with``)."""
        process = _process.current()
        if self._for is not process:
            if self._own is None and self._per_session is not None:
                self._own = anyio.Semaphore(self._per_session)
            shared = None if process.calls is None else process.calls.current()
            self._for, self._slots = process, Slots([lim for lim in (self._own, shared) if lim is not None])
        return self._slots
