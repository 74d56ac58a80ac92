"""An input waiting in the workflow's inbox, and how the workflow folds a batch of them.

Pure bookkeeping, no Temporal calls: the workflow stamps, checks and folds
here, then commits what was accepted to the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from msgspec.structs import replace

from agent_core import AgentInput, AgentState, InvalidInput, Rejection, transition


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
    """Fold ``batch`` onto ``state``: inputs of cancelled effects are dropped, refused ones marked.

    Timestamps never go backwards: an input stamped before the state's newest
    (a result computed while other inputs arrived) is applied at that time.
    """
    folded = Folded(state)
    for item in batch:
        if item.token in cancelled:
            item.done = True  # a cancelled effect's later inputs are dropped, as the machine drops them
            continue
        item.inp = stamped(item.inp, folded.state)
        try:
            folded.state = transition(folded.state, item.inp)
        except InvalidInput as refused:
            item.rejection, item.done = refused.rejection, True
            continue
        folded.accepted.append(item)
    return folded


def stamped(inp: AgentInput, state: AgentState) -> AgentInput:
    """``inp`` with its timestamp raised to the state's newest, if it was earlier."""
    return inp if inp.timestamp >= state.timestamp else replace(inp, timestamp=state.timestamp)
