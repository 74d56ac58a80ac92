"""What the effect runs of one machine call: queue an input, wait for its verdict, publish, schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ._commits import Commits
from ._run import EffectRun, RunHost

I = TypeVar("I")  # noqa: E741 - the input type


class MachineHost(RunHost[I]):
    """A machine's side of its effect runs (the :class:`RunHost` protocol), over the machine's own parts."""

    __slots__ = ("_commits", "_enqueue", "_publish", "_scheduler")

    def __init__(
        self,
        enqueue: Callable[[I], None],
        commits: Commits[I],
        publish: Callable[[Any], None],
        scheduler: Callable[[], Callable[..., object] | None],
    ) -> None:
        self._enqueue = enqueue
        self._commits = commits
        self._publish = publish
        self._scheduler = scheduler  # the running loop's call-soon, or None while stopped

    def enqueue(self, inp: I, origin: EffectRun[I] | None, /) -> None:
        if origin is not None:
            self._commits.sent(inp, origin)  # see EffectInputRefused
        self._enqueue(inp)

    async def committed(self, inp: I, /) -> bool:
        self._enqueue(inp)
        return await self._commits.verdict(inp)

    def publish(self, event: Any, /) -> None:
        self._publish(event)

    def schedule(self, callback: Callable[..., object], /, *args: object) -> object:
        schedule = self._scheduler()
        assert schedule is not None, "an effect run outlived its machine"
        return schedule(callback, *args)
