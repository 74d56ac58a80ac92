"""Which effects run: the keys started and not yet ended or cancelled, reconciled against what a state derives.

:class:`MachineCore` keeps one :class:`RunningEffects` and asks it to reconcile
after each batch; the key sets and the rule that an effect which ended on its
own is not restarted while its key is still derived live here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from ._events import EffectCanceled, EffectCompleted, EffectFailed, EffectStarted, MachineEvent
from ._reconcile import EMPTY_PLAN, Plan, reconcile

E = TypeVar("E")

NO_LONGER_DERIVED = "key no longer derived"
"""Cancellation reason when the state stops deriving an effect's key."""

MACHINE_STOPPED = "machine stopped"
"""Cancellation reason when the machine stops."""


class RunningEffects(Generic[E]):
    """The running effects by key, and the keys whose effect ended while the state still derives them."""

    def __init__(self) -> None:
        self.running: dict[str, E] = {}
        self.ended: dict[str, E] = {}  # ended on their own while still derived: not restarted

    def reconcile(self, wanted: Mapping[str, E], events: list[MachineEvent] | None) -> tuple[Plan, dict[str, E]]:
        """Cancel the running keys ``wanted`` lacks and start its keys neither running nor ended.

        Returns the plan and the effects starting by key; the ``effect-canceled``
        and ``effect-started`` events go to ``events`` (unless None).
        """
        ended, running = self.ended, self.running
        if ended:
            self.ended = ended = {key: eff for key, eff in ended.items() if key in wanted}
        plan = reconcile(running, wanted)
        if plan is EMPTY_PLAN:
            return plan, {}
        for key in plan.cancel:
            eff = running.pop(key)
            if events is not None:
                events.append(EffectCanceled(key=key, effect=eff, reason=NO_LONGER_DERIVED))
        starting = {key: wanted[key] for key in plan.start if key not in ended}
        if len(starting) != len(plan.start):
            plan = Plan(plan.cancel, tuple(starting))
        running.update(starting)
        if events is not None:
            events.extend(EffectStarted(key=key, effect=eff) for key, eff in starting.items())
        return plan, starting

    def end(self, key: str, error: BaseException | None, events: bool) -> MachineEvent | None:
        """Record that the effect under ``key`` ended; see :meth:`MachineCore.effect_ended`."""
        eff = self.running.pop(key, _MISSING)
        if eff is _MISSING:
            return None
        self.ended[key] = eff
        if not events:
            return None
        if error is None:
            return EffectCompleted(key=key, effect=eff)
        return EffectFailed(key=key, effect=eff, error=error)

    def stop(self, reason: str) -> list[MachineEvent]:
        """Forget every running and ended key; returns the ``effect-canceled`` events in running order."""
        events: list[MachineEvent] = [EffectCanceled(key=k, effect=e, reason=reason) for k, e in self.running.items()]
        self.running.clear()
        self.ended.clear()
        return events


_MISSING: Any = object()
