"""The generic effect machine: a sans-I/O reconciler, a synchronous core and an anyio shell.

Usable for any reducer, not only the agent. Import the public names from ``effects``.
"""

from ._backlog import DEFAULT_MAX_BACKLOG, Backpressure
from ._batch import StepResult
from ._core import MachineCore
from ._errors import EffectInputRefused, MachineStopped
from ._events import (
    EffectCanceled,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    InputReceived,
    InputRejected,
    MachineEvent,
    StateUpdated,
)
from ._machine import Machine
from ._protocols import Controller, Dispatch, Journal, OnLoop, Pending, effect
from ._reconcile import Plan, reconcile
from ._run import current_run, parked
from ._running import MACHINE_STOPPED, NO_LONGER_DERIVED

__all__ = [
    "DEFAULT_MAX_BACKLOG",
    "MACHINE_STOPPED",
    "NO_LONGER_DERIVED",
    "Backpressure",
    "Controller",
    "Dispatch",
    "EffectCanceled",
    "EffectCompleted",
    "EffectFailed",
    "EffectInputRefused",
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
    "parked",
    "reconcile",
]
