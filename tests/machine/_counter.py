"""A tiny counter reducer to drive the generic machine, as Moorex's own tests do.

``count`` goes up by ``Inc``. While ``count < limit`` the state derives one
``tick:<count>`` effect that dispatches ``Inc``, so the machine counts up to the
limit on its own. ``StartJob(name)`` / ``StopJob(name)`` add and remove a
``job:<name>`` effect whose behaviour each test supplies. ``check`` refuses a
negative limit and stopping a job that is not there; ``strict_transition``
refuses the same inputs by raising :class:`Refused`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import anyio

import effects
from effects import Controller, Machine, MachineEvent, effect, parked

E = TypeVar("E", bound=MachineEvent)



@dataclass(frozen=True)
class Counter:
    count: int = 0
    limit: int = 0
    jobs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Inc:
    by: int = 1


@dataclass(frozen=True)
class SetLimit:
    limit: int


@dataclass(frozen=True)
class StartJob:
    name: str


@dataclass(frozen=True)
class StopJob:
    name: str


Input = Inc | SetLimit | StartJob | StopJob
Dispatch = effects.Dispatch[Input]
Job = Callable[[Dispatch], Awaitable[None]]


def transition(state: Counter, inp: Input) -> Counter:
    if isinstance(inp, Inc):
        return replace(state, count=state.count + inp.by)
    if isinstance(inp, SetLimit):
        return replace(state, limit=inp.limit)
    if isinstance(inp, StartJob):
        return replace(state, jobs=(*state.jobs, inp.name))
    return replace(state, jobs=tuple(j for j in state.jobs if j != inp.name))


def check(state: Counter, inp: Input) -> str | None:
    if isinstance(inp, SetLimit) and inp.limit < 0:
        return f"limit must be >= 0, got {inp.limit}"
    if isinstance(inp, StopJob) and inp.name not in state.jobs:
        return f"job {inp.name!r} is not running"
    return None


class Refused(Exception):
    """What :func:`strict_transition` raises for an input :func:`check` would refuse; carries the rejection."""

    def __init__(self, rejection: str) -> None:
        super().__init__(rejection)
        self.rejection = rejection


def strict_transition(state: Counter, inp: Input) -> Counter:
    """``transition`` that validates as it folds: raises :class:`Refused` where ``check`` answers."""
    rejection = check(state, inp)
    if rejection is not None:
        raise Refused(rejection)
    return transition(state, inp)


def effects_at(state: Counter) -> dict[str, str]:
    wanted = {f"job:{name}": name for name in state.jobs}
    if state.count < state.limit:
        wanted[f"tick:{state.count}"] = "tick"
    return wanted


def fold(inputs: list[Input], state: Counter = Counter()) -> Counter:
    """What a log of inputs folds to: the reference the machine's states are checked against."""
    for inp in inputs:
        state = transition(state, inp)
    return state


async def idle(dispatch: Dispatch) -> None:
    """A job that waits, parked, until it is cancelled."""
    async with parked():
        await anyio.Event().wait()


def runner(jobs: Mapping[str, Job] | None = None) -> Callable[[str, Counter, str], Controller[Input]]:
    """``run_effect`` for the counter: ``tick`` dispatches ``Inc``; ``job:<name>`` runs ``jobs[name]``
    (:func:`idle` for a name not given; ``run_effect`` raises ``KeyError`` for names starting ``unknown``)."""
    jobs = dict(jobs or {})

    def run_effect(request: str, state: Counter, key: str) -> Controller[Input]:
        if request == "tick":

            async def tick(dispatch: Dispatch) -> None:
                dispatch(Inc())

            return effect(tick)
        if request.startswith("unknown"):
            raise KeyError(request)  # run_effect itself failing
        return effect(jobs.get(request, idle))

    return run_effect


class Timeline:
    """A subscriber that records every event, with short views for assertions."""

    def __init__(self) -> None:
        self.events: list[MachineEvent] = []

    def __call__(self, event: MachineEvent) -> None:
        self.events.append(event)

    def brief(self) -> list[str]:
        """Each event as ``type`` plus its key or input, e.g. ``effect-started tick:0``, ``input-received Inc(by=1)``."""
        out = []
        for event in self.events:
            detail = getattr(event, "key", None) or getattr(event, "input", None)
            out.append(f"{event.type} {detail!r}" if not isinstance(detail, str) else f"{event.type} {detail}")
        return out

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]


class Journal:
    """A journal that records each batch and the states it got with it (and optionally refuses a batch
    containing a given input)."""

    def __init__(self, calls: list[object] | None = None, refuse: Input | None = None) -> None:
        self.batches: list[list[Input]] = []
        self.states: list[list[Counter]] = []
        self.calls = calls if calls is not None else []
        self.refuse = refuse

    def append(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> None:
        self.calls.append(("journal", list(inputs)))
        if self.refuse is not None and self.refuse in inputs:
            raise OSError(f"cannot write {self.refuse!r}: disk full")
        self.batches.append(list(inputs))
        self.states.append(list(states))

    def log(self) -> list[Input]:
        return [inp for batch in self.batches for inp in batch]


def machine(
    jobs: Mapping[str, Job] | None = None,
    journal: Journal | None = None,
    initial: Counter = Counter(),
    strict: bool = False,
) -> tuple[Machine[Counter, Input, str], Timeline]:
    """A counter machine with ``check`` (``strict``: with ``strict_transition`` and ``rejects=Refused``),
    the given jobs and journal, and a :class:`Timeline` subscribed."""
    m: Machine[Counter, Input, str] = (
        Machine(initial, strict_transition, effects_at, runner(jobs), rejects=Refused, journal=journal)
        if strict
        else Machine(initial, transition, effects_at, runner(jobs), check=check, journal=journal)
    )
    timeline = Timeline()
    m.subscribe(timeline)
    return m, timeline
