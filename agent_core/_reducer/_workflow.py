"""The workflow and the rules in the reducer: checked at ``session-started``, enforced on each proposed
call, and moved along when a call succeeds."""

from __future__ import annotations

from typing import NamedTuple

from msgspec.structs import replace

from .._config import ToolDefinition
from .._inputs import (
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallRequest,
    ToolFailure,
    WorkflowActionTaken,
)
from .._rules import Judgement, Raised, guard_passes, judge, unregistered
from .._state import AgentState, ToolCallStatus
from .._workflow import Workflow, WorkflowMove, WorkflowState, WorkflowTransition, candidates, workflow_problems
from ._common import reject
from ._turns import end_turn


def check_workflow(state: AgentState, inp: SessionStarted) -> None:
    """Refuse a ``session-started`` whose workflow or rules do not hold together."""
    unknown_rules = unregistered("rule", inp.config.rules, "the session's config.rules", _STARTING)
    if unknown_rules:
        reject(state, inp, "unknown-rule", "rule-registered", unknown_rules)
    workflow = inp.config.workflow
    if workflow is None:
        return
    problems = workflow_problems(workflow, frozenset(tool.name for tool in inp.tools))
    if problems:
        reject(state, inp, "invalid-workflow", "workflow-consistent", "; ".join(problems) + "; fix the workflow")
    unknown = unregistered("guard", (t.guard for t in workflow.transitions), "the session's workflow", _STARTING)
    if unknown:
        reject(state, inp, "unknown-guard", "guard-registered", unknown)


_STARTING = "register it with register_{kind}() before the session starts, or fix the name"


class Tripped(NamedTuple):
    """A guard refused the batch: ``reason`` is the turn's outcome code, ``detail`` why the calls were not run."""

    reason: str
    detail: str


def judge_batch(
    state: AgentState, inp: ReActObserved, requests: dict[str, ToolCallRequest]
) -> tuple[dict[str, Judgement], Tripped | None]:
    """Each proposed call of a registered tool the workflow state offers, judged once by the session's
    rules; and the first rule that says ``stop`` or raises, which ends the judging (and the turn)."""
    rules = state.config.rules
    if not rules:
        return {}, None
    missing = unregistered("rule", rules, "the session's config.rules")
    if missing:
        reject(state, inp, "unknown-rule", "rule-registered", missing)
    here = _here(state)
    judged: dict[str, Judgement] = {}
    for call_id, request in requests.items():
        name = request.name
        if state.tools.get(name) is None or (here is not None and name not in here.tools):
            continue  # refused before any rule is asked
        judgement = judge(rules, call_id, name, request.parameters, state)
        if isinstance(judgement, Raised):
            return judged, Tripped(judgement.reason, judgement.detail(f"tool call {call_id!r} ({name})"))
        if judgement.verdict.kind == "stop":
            return judged, Tripped(
                f"rule:{judgement.rule}",
                f"rule {judgement.rule!r} stopped the turn: {judgement.verdict.reason}",
            )
        judged[call_id] = judgement
    return judged, None


def gate(
    state: AgentState, tool: ToolDefinition, call_id: str, judgement: Judgement | None
) -> tuple[ToolCallStatus, ToolFailure | None]:
    """Where a proposed call of a registered tool goes: refused, awaiting a person, or pending.

    Refused when the workflow state does not offer the tool, or the rules' ``judgement``
    (from :func:`judge_batch`) says ``retry``; awaiting when the tool needs approval (always or in this
    workflow state) or a rule says ``ask``. A ``stop`` was handled before.
    """
    name = tool.name
    here = _here(state)
    if here is not None and name not in here.tools:
        valid = ", ".join(here.tools) or "none"
        error = (
            f"tool {name!r} is not allowed in workflow state {here.name!r} (tool call {call_id!r}); "
            f"tools valid in {here.name!r}: {valid}"
        )
        return "completed", ToolFailure(error=error)
    kind = judgement.verdict.kind if judgement is not None else "allow"
    if kind == "retry":
        assert judgement is not None
        return "completed", ToolFailure(
            error=f"refused by rule {judgement.rule!r}: {judgement.verdict.reason}; try a different call"
        )
    if kind == "ask" or tool.requires_approval or (here is not None and name in here.approval):
        return "awaiting-approval", None
    return "pending", None


def _here(state: AgentState) -> WorkflowState | None:
    """The workflow state the session is in (``None`` without a workflow)."""
    workflow = state.config.workflow
    return None if workflow is None else workflow.state(state.workflow_state)


def take(
    state: AgentState, inp: ToolCallCompleted | WorkflowActionTaken, tried: tuple[WorkflowTransition, ...]
) -> WorkflowTransition | Raised | None:
    """The first of ``tried`` whose guard passes, each guard asked once; the guard that raised
    (no later one is asked); or ``None``. ``state`` already carries the input's timestamp and step."""
    if not tried:  # most completions move nothing: no guard to look up
        return None
    missing = unregistered("guard", (t.guard for t in tried), "the session's workflow")
    if missing:
        reject(state, inp, "unknown-guard", "guard-registered", missing)
    for t in tried:
        passed = guard_passes(t.guard, state, inp)
        if isinstance(passed, Raised) or passed:
            return passed if isinstance(passed, Raised) else t
    return None


def move(state: AgentState, inp: ToolCallCompleted | WorkflowActionTaken, t: WorkflowTransition) -> AgentState:
    """The session moved along ``t``, the move appended to the audit."""
    entry = WorkflowMove(
        source=t.source,
        target=t.target,
        step=state.step,
        trigger=t.trigger,
        guard=t.guard,
        tool_call_id=inp.tool_call_id if isinstance(inp, ToolCallCompleted) else "",
        at=inp.timestamp,
    )
    return replace(state, workflow_state=t.target, audit=state.audit.append(entry))


def advance(state: AgentState, inp: ToolCallCompleted, name: str) -> tuple[AgentState, bool]:
    """After a call of tool ``name`` succeeded: take the first transition it triggers whose guard passes
    (``state`` unchanged when none does), or fail the turn when a guard raises (then ``True``).
    ``state`` already carries the input's timestamp and step."""
    workflow: Workflow | None = state.config.workflow
    if workflow is None:
        return state, False
    taken = take(state, inp, candidates(workflow, state.workflow_state, f"tool:{name}"))
    if taken is None:
        return state, False
    if isinstance(taken, Raised):
        detail = taken.detail(f"the success of tool call {inp.tool_call_id!r} ({name})")
        return end_turn(state, "failed", taken.reason, detail), True
    return move(state, inp, taken), False
