"""What the machine learns from each batch about the inputs effects dispatched: the verdicts
``dispatch_committed`` waits for, and the refusals that mean an effect is stuck."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import anyio

from ._core import MachineCore
from ._events import EffectInputRefused
from ._run import EffectRun

I = TypeVar("I")  # noqa: E741 - the input type


class Commits(Generic[I]):
    """Inputs from effect runs since the last batch (by identity), and the waiters for verdicts."""

    __slots__ = ("_origins", "_waiters")

    def __init__(self) -> None:
        self._origins: dict[int, EffectRun[I]] = {}  # id(input) -> the run that dispatched it
        self._waiters: dict[int, tuple[anyio.Event, list[bool]]] = {}  # id(input) -> dispatch_committed waiter

    def sent(self, inp: I, run: EffectRun[I]) -> None:
        """``run`` dispatched ``inp``."""
        self._origins[id(inp)] = run

    async def verdict(self, inp: I) -> bool:
        """Wait for the batch that takes ``inp`` (queue it first): ``True`` if applied, ``False`` if refused."""
        event, verdict = anyio.Event(), list[bool]()
        self._waiters[id(inp)] = (event, verdict)
        try:
            await event.wait()
        finally:
            self._waiters.pop(id(inp), None)
        return verdict == [True]

    def settle(
        self, accepted: list[tuple[I, Any]], rejected: list[tuple[I, Any]], core: MachineCore[Any, I, Any] | None
    ) -> None:
        """Give waiters their verdicts; raise :class:`EffectInputRefused` for an effect's input refused while the
        state still derives that effect (call after reconciling and cancelling). ``core=None`` (a batch applied
        as the machine stops, without reconciling: every effect is being cancelled) checks no refusal."""
        if self._waiters:
            for inp, _ in accepted:
                waiter = self._waiters.get(id(inp))
                if waiter is not None:
                    waiter[1].append(True)
                    waiter[0].set()
            for inp, _ in rejected:
                waiter = self._waiters.get(id(inp))
                if waiter is not None:
                    waiter[0].set()
        origins = self._origins
        if not origins:
            return
        # Only this batch's inputs: effects may dispatch more while the batch is being committed.
        for inp, _ in accepted:
            origins.pop(id(inp), None)
        for inp, rejection in rejected:
            run = origins.pop(id(inp), None)
            if core is not None and run is not None and not run.cancelled and core.tracks(run.key):
                raise EffectInputRefused(run.key, inp, rejection)

    def stop(self) -> None:
        """The machine stopped: waiters get ``False``; the origins are forgotten."""
        self._origins.clear()
        for event, _ in self._waiters.values():
            event.set()
