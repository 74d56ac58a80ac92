"""An input waiting in the workflow's inbox, and how the workflow folds a batch of them.

Pure bookkeeping, no Temporal calls: the workflow stamps, checks and folds
here, then commits what was accepted to the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from agent_core import AgentInput, AgentState, InvalidInput, Rejection, transition

from .._machine import fold as machine_fold


@dataclass(eq=False)
class Pending:
    """An input from outside (``token`` 0) or from the running effect ``token``; ``done`` once folded."""

    inp: AgentInput
    token: int = 0
    done: bool = False
    seq: int = 0
    rejection: Rejection | None = None


@dataclass
class Folded:
    """A batch folded onto a state: the state after it and the items accepted, in order."""

    state: AgentState
    accepted: list[Pending] = field(default_factory=list)


def fold(state: AgentState, batch: list[Pending], cancelled: set[int]) -> Folded:
    """Fold ``batch`` onto ``state`` with the machine's fold: inputs of cancelled effects are dropped, refused
    ones marked.

    Timestamps never go backwards: an input stamped before the state's newest
    (a result computed while other inputs arrived) is applied at that time.
    """
    live = []
    for item in batch:
        if item.token in cancelled:
            item.done = True  # a cancelled effect's later inputs are dropped, as the machine drops them
        else:
            live.append(item)
    accepted: list[tuple[Pending, AgentState]] = []
    rejected: list[tuple[Pending, Any]] = []
    after = machine_fold(state, live, None, _stamped_transition, InvalidInput, accepted, rejected, None)
    for item, rejection in rejected:
        item.rejection, item.done = rejection, True
    return Folded(after, [item for item, _ in accepted])


def _stamped_transition(state: AgentState, item: Pending) -> AgentState:
    item.inp = stamped(item.inp, state)
    return transition(state, item.inp)


def stamped(inp: AgentInput, state: AgentState) -> AgentInput:
    """``inp`` with its timestamp raised to the state's newest, if it was earlier."""
    return inp if inp.timestamp >= state.timestamp else replace(inp, timestamp=state.timestamp)
