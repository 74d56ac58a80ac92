"""The synchronous machine: applies inputs in batches, journals them, and reconciles the running effects.

No threads, no event loop, no I/O: a host without asyncio drives it in a plain
loop (see ``examples/host_driven.py``), and the async :class:`Machine` is a
thin shell around it. The running key set and its reconciliation live in
``_running``; folding one batch lives in ``_batch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from ._batch import Rejects, StepResult, checked_rejects, fold
from ._events import MachineEvent
from ._protocols import Journal
from ._reconcile import EMPTY_PLAN
from ._running import MACHINE_STOPPED, RunningEffects

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


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
        self._effects: RunningEffects[E] = RunningEffects()
        self._applying = False

    def current(self) -> S:
        """The state after every input applied so far."""
        return self._state

    def running_keys(self) -> tuple[str, ...]:
        """Keys of the effects started and neither ended nor cancelled, in start order."""
        return tuple(self._effects.running)

    def running(self) -> Mapping[str, E]:
        """The running effects by key, in start order (a read-only view)."""
        return self._effects.running.copy()

    def tracks(self, key: str) -> bool:
        """Whether the state (as of the last reconciliation) derives ``key``, with its effect running or ended."""
        effects = self._effects
        return key in effects.running or key in effects.ended

    def ended_keys(self) -> tuple[str, ...]:
        """Keys whose effect ended while the state still derives them (they are not restarted)."""
        return tuple(self._effects.ended)

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
        plan, starting = self._effects.reconcile(self._effects_at(state), events) if reconcile else (EMPTY_PLAN, {})
        return StepResult(
            accepted=accepted,
            rejected=rejected,
            plan=plan,
            starting=starting,
            events=events if events else [],
            pending=pending,
        )

    def effect_ended(self, key: str, error: BaseException | None = None, *, events: bool = True) -> MachineEvent | None:
        """Record that the running effect under ``key`` ended (raised ``error`` if given).

        Returns the event to publish (``effect-completed`` or ``effect-failed``),
        or ``None`` when ``key`` is not running (it was cancelled meanwhile, so its
        end is no news). Report only the end of the run started last under ``key``.
        With ``events=False`` the end is recorded the same and no event is built
        (``None``): a host with nobody to tell skips that work.
        """
        return self._effects.end(key, error, events)

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
        return self._effects.stop(reason)
