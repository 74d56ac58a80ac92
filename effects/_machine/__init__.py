"""The generic effect machine: a sans-I/O reconciler, a synchronous core and an anyio shell.

Usable for any reducer, not only the agent. Import the public names from ``effects``.
"""

from ._backlog import DEFAULT_MAX_BACKLOG
from ._core import MachineCore, Plan, StepResult, reconcile
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
from ._machine import Machine
from ._protocols import Controller, Dispatch, Journal, OnLoop, Pending, effect
from ._run import current_run, parked

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
