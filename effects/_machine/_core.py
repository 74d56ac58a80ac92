"""The sans-I/O machine: which effects start and stop, and applying a batch of inputs.

No threads, no event loop, no I/O, so any event loop (or none) can drive it:
:func:`reconcile` compares key sets; :func:`fold` folds inputs, sorting them
into accepted and refused; :class:`MachineCore` applies a batch (check,
transition, ``follow_up``, the journal's verdict, ``effects_at``) and keeps the
running keys. The async :class:`~effects.Machine` and the Temporal workflow
are both drivers of these; a host without asyncio drives :class:`MachineCore`
in a plain loop (``examples/host_driven.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from collections.abc import Set as AbstractSet
from itertools import filterfalse
from typing import Any, Generic, TypeVar

import msgspec

from ._events import (
    MACHINE_STOPPED,
    NO_LONGER_DERIVED,
    EffectCanceled,
    EffectCompleted,
    EffectFailed,
    EffectInputRefused,
    EffectStarted,
    InputReceived,
    InputRejected,
    MachineEvent,
    StateUpdated,
)
from ._protocols import Journal, Pending

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")

Rejects = type[Exception] | tuple[type[Exception], ...]
"""The exception types by which ``transition`` refuses an input (``()``: none)."""


class Plan(msgspec.Struct, frozen=True):
    """What a reconciliation decided: keys to ``cancel`` (in running order), keys to ``start`` (in wanted order)."""

    cancel: tuple[str, ...] = ()
    start: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        """True when the plan has anything to do."""
        return bool(self.cancel or self.start)


EMPTY_PLAN = Plan()

_LOOKUPS = (dict, set, frozenset, Mapping, AbstractSet)


def reconcile(running: Iterable[str], wanted: Mapping[str, Any]) -> Plan:
    """Compare the running keys with the keys the state wants now.

    Keys in ``running`` but not in ``wanted`` are cancelled, in the order of
    ``running``; keys in ``wanted`` but not running are started, in the order of
    ``wanted`` (the order ``effects_at`` returned them), so a run is reproducible.
    Cancelling then starting turns the running set into exactly ``wanted``'s keys.
    ``running`` must not repeat a key. A key that is still wanted keeps running
    untouched: an effect's identity is its key, not its value.
    """
    # Mappings and sets answer `in` in constant time; anything else is read once into a dict (ordered).
    if type(running) is not dict and not isinstance(running, _LOOKUPS):
        running = dict.fromkeys(running)
    # filterfalse over the other side's `in`: no generator, and (on 3.11) no comprehension making cells.
    cancel = tuple(filterfalse(wanted.__contains__, running))
    start = tuple(filterfalse(running.__contains__, wanted))
    if cancel or start:
        return Plan(cancel, start)
    return EMPTY_PLAN


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
    or ``rejected`` (with its rejection), and its timeline in ``events`` (unless None).

    An input is refused when ``check(state, input)`` returns anything but
    ``None``, or when ``transition`` raises one of ``rejects`` (the rejection is
    the error's ``rejection`` attribute, else the error). Any other error propagates.
    """
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


def stuck_effect(
    rejected: Iterable[tuple[I, Any]], origin: Callable[[I], str | None], derived: Container[str]
) -> EffectInputRefused | None:
    """The error for the first refused input an effect sent while the state still derives that effect.

    ``origin(input)`` names the effect that sent an input (``None``: from
    outside); ``derived`` holds the keys the state still derives. Such an effect
    would wait, or run again, forever: a bug to stop on. A refused input whose
    effect is no longer derived is a harmless race (a tool finishing as its
    turn is cancelled) and gives ``None``.
    """
    for inp, rejection in rejected:
        key = origin(inp)
        if key is not None and key in derived:
            return EffectInputRefused(key, inp, rejection)
    return None


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


class MachineCore(Generic[S, I, E]):
    """Folds inputs into a state and tracks which effects run, without running anything.

    ``transition(state, input) -> state`` and ``effects_at(state) -> {key: effect}``
    must be pure. An input is refused, and changes nothing, in two ways:

    * ``rejects``: an exception type (or a tuple of them) that ``transition``
      raises for an invalid input. The rejection is the error's ``rejection``
      attribute if it has one, else the error itself. This asks the reducer
      once per input, so prefer it when ``transition`` validates anyway.
    * ``check(state, input)``, asked before ``transition``: ``None`` accepts the
      input, anything else is the rejection. For reducers with a cheap
      separate check.

    ``follow_up(before, after)``, when given, is asked after a batch that
    accepted an input (and is reconciled), with the states before and after
    it: the inputs it returns are applied right after, in the same batch, so
    they are journaled in the same commit and no effect sees the state
    between. It is how a host records, in the batch that makes them runnable,
    facts the effects about to start rely on (the agent marks the tool calls a
    batch made runnable as started; effects already running for calls runnable
    before may have dispatched their own inputs meanwhile).

    Any other exception from ``transition`` propagates and the batch is not applied.

    The host starts the effects of ``result.starting``, cancels those of
    ``result.plan.cancel``, and calls :meth:`effect_ended` when a started effect
    ends on its own. After every :meth:`apply`, the running keys are a subset of
    ``effects_at(current())`` and every key it derives is running or has ended
    while derived; an ended key starts again only after the state stops deriving it.
    """

    def __init__(
        self,
        initial: S,
        transition: Callable[[S, I], S],
        effects_at: Callable[[S], Mapping[str, E]],
        check: Callable[[S, I], object | None] | None = None,
        *,
        rejects: Rejects = (),
        follow_up: Callable[[S, S], Iterable[I]] | None = None,
    ) -> None:
        self._state = initial
        self._follow_up = follow_up
        self._transition = transition
        self._effects_at = effects_at
        self._check = check
        self._rejects = checked_rejects(rejects)
        self._running: dict[str, E] = {}
        self._ended: dict[str, E] = {}  # ended on their own while still derived: not restarted
        self._applying = False

    def current(self) -> S:
        """The state after every input applied so far."""
        return self._state

    def running_keys(self) -> tuple[str, ...]:
        """Keys of the effects started and neither ended nor cancelled, in start order."""
        return tuple(self._running)

    def running(self) -> Mapping[str, E]:
        """The running effects by key, in start order (a read-only view)."""
        return self._running.copy()

    def tracks(self, key: str) -> bool:
        """Whether the state (as of the last reconciliation) derives ``key``, with its effect running or ended."""
        return key in self._running or key in self._ended

    def ended_keys(self) -> tuple[str, ...]:
        """Keys whose effect ended while the state still derives them (they are not restarted)."""
        return tuple(self._ended)

    def apply(
        self,
        inputs: Iterable[I],
        *,
        journal: Journal[S, I] | None = None,
        reconcile: bool = True,
        events: bool = True,
        hand_over: bool = False,
    ) -> StepResult[S, I, E]:
        """Apply ``inputs`` in order as one batch, then reconcile once against the final state.

        ``journal.append`` receives the accepted inputs and the state after each
        before anything changes; if it raises, nothing is applied. ``apply([])``
        only reconciles (use it to start the effects of the initial or a resumed
        state). With ``reconcile=False`` the inputs are applied but no effect is
        planned. With ``events=False`` no event is built and ``result.events`` is
        empty (a host with nobody to tell skips that work); the rest is the same.
        With ``hand_over=True`` a journal that has ``submit(inputs, states)``
        gets the batch there instead, and the future it returns is
        ``result.pending``: the host waits for it (the async :class:`Machine`
        does, without blocking its loop) before acting on the result.
        """
        if self._applying:
            raise RuntimeError(
                "MachineCore.apply was called while a batch was being applied (from transition, "
                "check, effects_at or the journal); queue the input and apply it after this batch returns"
            )
        self._applying = True
        try:
            return self._apply(inputs, journal, reconcile, [] if events else None, hand_over)
        finally:
            self._applying = False

    def _apply(
        self,
        inputs: Iterable[I],
        journal: Journal[S, I] | None,
        reconcile: bool,
        events: list[MachineEvent] | None,
        hand_over: bool,
    ) -> StepResult[S, I, E]:
        accepted: list[tuple[I, S]] = []
        rejected: list[tuple[I, Any]] = []
        how = self._check, self._transition, self._rejects, accepted, rejected, events
        state = fold(self._state, inputs, *how)
        if accepted and reconcile and self._follow_up is not None:
            state = fold(state, self._follow_up(self._state, state), *how)
        pending = None
        if accepted and journal is not None:
            submit = getattr(journal, "submit", None) if hand_over else None
            if submit is None:
                journal.append([inp for inp, _ in accepted], [after for _, after in accepted])
            else:
                pending = submit([inp for inp, _ in accepted], [after for _, after in accepted])
        self._state = state
        plan, starting = self._reconcile(self._effects_at(state), events) if reconcile else (EMPTY_PLAN, {})
        return StepResult(
            accepted=accepted,
            rejected=rejected,
            plan=plan,
            starting=starting,
            events=events if events else [],
            pending=pending,
        )

    def _reconcile(self, wanted: Mapping[str, E], events: list[MachineEvent] | None) -> tuple[Plan, dict[str, E]]:
        """Cancel the running keys ``wanted`` lacks; start its keys neither running nor ended while derived."""
        ended, running = self._ended, self._running
        if ended:
            self._ended = ended = _kept(ended, wanted)
        plan = reconcile(running, wanted)
        if plan is EMPTY_PLAN:
            return plan, {}
        for key in plan.cancel:
            eff = running.pop(key)
            if events is not None:
                events.append(EffectCanceled(key=key, effect=eff, reason=NO_LONGER_DERIVED))
        starting: dict[str, E] = {}
        for key in plan.start:
            if key not in ended:
                starting[key] = wanted[key]
        if len(starting) != len(plan.start):
            plan = Plan(plan.cancel, tuple(starting))
        running.update(starting)
        if events is not None:
            events.extend(EffectStarted(key=key, effect=eff) for key, eff in starting.items())
        return plan, starting

    def effect_ended(self, key: str, error: BaseException | None = None, *, events: bool = True) -> MachineEvent | None:
        """Record that the running effect under ``key`` ended (raised ``error`` if given).

        Returns the event to publish (``effect-completed`` or ``effect-failed``),
        or ``None`` when ``key`` is not running (it was cancelled meanwhile, so its
        end is no news). Report only the end of the run started last under ``key``.
        With ``events=False`` the end is recorded the same and no event is built
        (``None``): a host with nobody to tell skips that work.
        """
        eff = self._running.pop(key, _MISSING)
        if eff is _MISSING:
            return None
        self._ended[key] = eff
        if not events:
            return None
        if error is None:
            return EffectCompleted(key=key, effect=eff)
        return EffectFailed(key=key, effect=eff, error=error)

    def revert(self, state: S) -> None:
        """Go back to ``state``, :meth:`current` before the last :meth:`apply`, whose ``result.pending`` commit failed.

        The journal holds none of that batch, so neither does the state. The
        host then stops the core (:meth:`stop`): the effects the batch planned never started.
        """
        self._state = state

    def stop(self, reason: str = MACHINE_STOPPED) -> list[MachineEvent]:
        """Cancel every running effect with ``reason``; returns the ``effect-canceled`` events in running order.

        Ended keys are forgotten too, so a later :meth:`apply` starts everything
        the state derives again: that is how a stopped machine resumes.
        """
        events: list[MachineEvent] = [EffectCanceled(key=k, effect=e, reason=reason) for k, e in self._running.items()]
        self._running.clear()
        self._ended.clear()
        return events


_MISSING: Any = object()


def _kept(ended: dict[str, E], wanted: Mapping[str, E]) -> dict[str, E]:
    """The ended keys still derived (a function of its own: on 3.11 a comprehension over ``wanted`` in
    ``_reconcile`` would make cells on every call)."""
    return {key: eff for key, eff in ended.items() if key in wanted}
