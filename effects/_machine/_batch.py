"""One batch of inputs folded into a state: what was accepted (with the state after each), what was
refused and why, the events for subscribers; and :class:`StepResult`, what :meth:`MachineCore.apply` reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import msgspec

from ._events import InputReceived, InputRejected, MachineEvent, StateUpdated
from ._protocols import Pending
from ._reconcile import Plan

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")

Rejects = type[Exception] | tuple[type[Exception], ...]
"""The exception types by which ``transition`` refuses an input (``()``: none)."""


class StepResult(msgspec.Struct, Generic[S, I, E], frozen=True, kw_only=True):
    """What one :meth:`MachineCore.apply` did.

    ``accepted`` pairs each applied input with the state right after it;
    ``rejected`` pairs each refused input with its rejection; ``plan`` is the
    reconciliation against the final state; ``starting`` maps each key of
    ``plan.start`` to its effect; ``events`` is the timeline to publish, in order.
    ``pending`` is the journal's commit still in flight (``apply(hand_over=True)``
    with a journal that has ``submit``): wait for it before publishing the
    events or starting the effects.
    """

    accepted: list[tuple[I, S]]
    rejected: list[tuple[I, Any]]
    plan: Plan
    starting: dict[str, E]
    events: list[MachineEvent]
    pending: Pending | None = None


def fold(
    state: S,
    inputs: Iterable[I],
    check: Callable[[S, I], object | None] | None,
    transition: Callable[[S, I], S],
    rejects: Rejects,
    accepted: list[tuple[I, S]],
    rejected: list[tuple[I, Any]],
    events: list[MachineEvent] | None,
) -> S:
    """``state`` after the inputs of ``inputs`` it accepts; each lands in ``accepted`` (with the state after it)
    or ``rejected`` (with its rejection), and its timeline in ``events`` (unless None)."""
    for inp in inputs:
        rejection = None if check is None else check(state, inp)
        if rejection is None:
            try:
                state = transition(state, inp)  # not assigned when it raises: the input changes nothing
            except rejects as error:
                rejection = _rejection_of(error)
            else:
                accepted.append((inp, state))
                if events is not None:
                    events.append(InputReceived(input=inp))
                    events.append(StateUpdated(input=inp, state=state))
                continue
        rejected.append((inp, rejection))
        if events is not None:
            events.append(InputRejected(input=inp, rejection=rejection))
    return state


def checked_rejects(rejects: Rejects) -> Rejects:
    types = rejects if isinstance(rejects, tuple) else (rejects,)
    if not all(isinstance(t, type) and issubclass(t, Exception) for t in types):
        raise TypeError(
            f"rejects= expects an exception type or a tuple of them (e.g. rejects=InvalidInput), got {rejects!r}"
        )
    return rejects


def _rejection_of(error: Exception) -> object:
    """What an input-rejected event carries for ``error``: its ``rejection`` attribute, else the error itself."""
    rejection = getattr(error, "rejection", None)
    return error if rejection is None else rejection
