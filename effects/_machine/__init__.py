"""The generic effect machine: a sans-I/O core (reconcile, fold, :class:`MachineCore`), effect runs, and the door
(:class:`Machine`) that drives them under asyncio or trio.

Usable for any reducer, not only the agent. Import the public names from ``effects``.
"""

from ._core import MachineCore, Plan, StepResult, fold, reconcile, stuck_effect
from ._events import (
    MACHINE_STOPPED,
    NO_LONGER_DERIVED,
    Backpressure,
    EffectCanceled,
    EffectCompleted,
    EffectFailed,
    EffectInputRefused,
    EffectStarted,
    InputReceived,
    InputRejected,
    MachineEvent,
    MachineStopped,
    StateUpdated,
)
from ._machine import DEFAULT_MAX_BACKLOG, Machine
from ._protocols import Controller, Dispatch, Journal, OnLoop, Pending, effect
from ._runs import Alarm, EffectRun, current_run, parked, sleep
from ._tasks import reraise_single

__all__ = [
    "DEFAULT_MAX_BACKLOG",
    "MACHINE_STOPPED",
    "NO_LONGER_DERIVED",
    "Alarm",
    "Backpressure",
    "Controller",
    "Dispatch",
    "EffectCanceled",
    "EffectCompleted",
    "EffectFailed",
    "EffectInputRefused",
    "EffectRun",
    "EffectStarted",
    "InputReceived",
    "InputRejected",
    "Journal",
    "Machine",
    "MachineCore",
    "MachineEvent",
    "MachineStopped",
    "OnLoop",
    "Pending",
    "Plan",
    "StateUpdated",
    "StepResult",
    "current_run",
    "effect",
    "fold",
    "parked",
    "reconcile",
    "reraise_single",
    "sleep",
    "stuck_effect",
]
