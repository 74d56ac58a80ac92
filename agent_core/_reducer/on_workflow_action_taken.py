"""``workflow-action-taken``: an explicit action (a person's decision) moves the workflow."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import WorkflowActionTaken
from .._rules import Raised
from .._state import AgentState
from .._workflow import candidates
from ._common import reject
from ._workflow import move, take


def on_workflow_action_taken(state: AgentState, inp: WorkflowActionTaken) -> AgentState:
    """Take the first transition triggered by ``action`` from the current workflow state whose guard
    passes. In an open turn the next model call is derived anew (the tools it offers changed).
    Refused when no guard passes, or when a guard raises (``guard-raised``, naming it and its error)."""
    workflow = state.config.workflow
    if workflow is None:
        reject(
            state,
            inp,
            "no-workflow",
            "workflow-declared",
            f"action {inp.action!r} was taken, but session {state.session_id!r} declares no workflow; "
            "expected a session whose session-started carries config.workflow",
        )
    trigger = f"action:{inp.action}"
    here = state.workflow_state
    tried = candidates(workflow, here, trigger)
    if not tried:
        valid = sorted({t.action for t in workflow.transitions if t.source == here and t.action})
        reject(
            state,
            inp,
            "no-transition",
            "transition-exists",
            f"no transition from workflow state {here!r} is triggered by action {inp.action!r}; "
            f"actions valid in {here!r}: {', '.join(valid) or 'none'}",
        )
    moved = replace(state, timestamp=inp.timestamp, step=state.step + 1)
    taken = take(moved, inp, tried)
    if isinstance(taken, Raised):
        reject(
            state,
            inp,
            "guard-raised",
            "guard-returns",
            taken.detail(f"action {inp.action!r} in workflow state {here!r}"),
        )
    if taken is None:
        guards = ", ".join(t.guard for t in tried)
        reject(
            state,
            inp,
            "guards-refused",
            "guard-passes",
            f"action {inp.action!r} in workflow state {here!r}: no guard passed (tried {guards}); "
            "expected the state those guards require",
        )
    moved = move(moved, inp, taken)
    turn = moved.turn
    if turn is not None:
        moved = replace(moved, turn=replace(turn, context_rev=turn.context_rev + 1))
    return moved
