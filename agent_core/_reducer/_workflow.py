"""The workflow and the rules in the reducer: checked at ``session-started``, enforced on each proposed
call, and moved along when a call succeeds."""

from __future__ import annotations

from msgspec.structs import replace

from .._config import ToolDefinition
from .._inputs import SessionStarted, ToolCallCompleted, ToolFailure, WorkflowActionTaken
from .._rules import Verdict, guard_passes, judge, known_guards, known_rules
from .._state import AgentState, ToolCallStatus
from .._workflow import Workflow, WorkflowMove, candidates
from ._common import reject


def check_workflow(state: AgentState, inp: SessionStarted) -> None:
    """Refuse a ``session-started`` whose workflow or rules do not hold together."""
    unknown_rules = [name for name in inp.config.rules if name not in known_rules()]
    if unknown_rules:
        reject(state, inp, "unknown-rule", "rule-registered", _unknown("rule", unknown_rules, known_rules()))
    workflow = inp.config.workflow
    if workflow is None:
        return
    names = workflow.names
    problems: list[str] = []
    if len(set(names)) != len(names) or not names:
        problems.append(f"expected at least one state and unique state names, got: {', '.join(names) or 'none'}")
    if workflow.initial not in names:
        problems.append(f"initial state {workflow.initial!r} is not declared; declared: {', '.join(names)}")
    declared = {tool.name for tool in inp.tools}
    for ws in workflow.states:
        for tool in (*ws.tools, *ws.approval):
            if tool not in declared:
                problems.append(f"state {ws.name!r} names tool {tool!r}, which session-started does not declare")
        problems.extend(
            f"state {ws.name!r} asks approval for {tool!r}, which it does not offer"
            for tool in ws.approval
            if tool not in ws.tools
        )
    for t in workflow.transitions:
        for end in (t.source, t.target):
            if end not in names:
                problems.append(f"transition {t.source!r} -> {t.target!r} names undeclared state {end!r}")
        if bool(t.tool) == bool(t.action):
            problems.append(f"transition {t.source!r} -> {t.target!r} must name exactly one of tool and action")
        elif t.tool and t.tool not in declared:
            problems.append(f"transition {t.source!r} -> {t.target!r} is triggered by undeclared tool {t.tool!r}")
    if problems:
        reject(state, inp, "invalid-workflow", "workflow-consistent", "; ".join(problems) + "; fix the workflow")
    unknown = sorted({t.guard for t in workflow.transitions if t.guard and t.guard not in known_guards()})
    if unknown:
        reject(state, inp, "unknown-guard", "guard-registered", _unknown("guard", unknown, known_guards()))


def _unknown(kind: str, names: list[str], known: tuple[str, ...]) -> str:
    return (
        f"expected registered {kind} names, got unknown {kind}(s): {', '.join(names)}; "
        f"known {kind}s: {', '.join(known) or 'none'}; register it with register_{kind}() "
        "before the session starts, or fix the name"
    )


def gate(
    state: AgentState, tool: ToolDefinition, call_id: str, parameters: str
) -> tuple[ToolCallStatus, ToolFailure | None]:
    """Where a proposed call of a registered tool goes: refused, awaiting a person, or pending.

    Refused when the workflow state does not offer the tool, or a rule says
    ``retry``; awaiting when the tool needs approval (always or in this
    workflow state) or a rule says ``ask``. A ``stop`` was handled before.
    """
    name = tool.name
    workflow = state.config.workflow
    if workflow is not None:
        here = workflow.state(state.workflow_state)
        if name not in here.tools:
            valid = ", ".join(here.tools) or "none"
            error = (
                f"tool {name!r} is not allowed in workflow state {here.name!r} (tool call {call_id!r}); "
                f"tools valid in {here.name!r}: {valid}"
            )
            return "completed", ToolFailure(error=error)
    rule, verdict = judge(state.config.rules, call_id, name, parameters, state) if state.config.rules else ("", None)
    if verdict is not None and verdict.kind == "retry":
        return "completed", ToolFailure(error=f"refused by rule {rule!r}: {verdict.reason}; try a different call")
    if (verdict is not None and verdict.kind == "ask") or tool.requires_approval or _asked_here(state, name):
        return "awaiting-approval", None
    return "pending", None


def first_stop(state: AgentState, calls: dict[str, tuple[str, str]]) -> tuple[str, Verdict] | None:
    """The first rule that says ``stop`` about one of ``calls`` (id -> (name, parameters)), if any."""
    if not state.config.rules:
        return None
    for call_id, (name, parameters) in calls.items():
        if state.tools.get(name) is None or not offered(state, name):
            continue
        rule, verdict = judge(state.config.rules, call_id, name, parameters, state)
        if verdict.kind == "stop":
            return rule, verdict
    return None


def offered(state: AgentState, name: str) -> bool:
    """Whether the current workflow state offers tool ``name`` (every tool, without a workflow)."""
    workflow = state.config.workflow
    return workflow is None or name in workflow.state(state.workflow_state).tools


def _asked_here(state: AgentState, name: str) -> bool:
    """Whether the current workflow state asks a person's approval for calls of ``name``."""
    workflow = state.config.workflow
    return workflow is not None and name in workflow.state(state.workflow_state).approval


def advance(state: AgentState, inp: ToolCallCompleted | WorkflowActionTaken, trigger: str) -> AgentState:
    """Take the first transition ``trigger`` may take whose guard passes, recording it; ``state``
    unchanged when none does. ``state`` already carries the input's timestamp and step."""
    workflow: Workflow | None = state.config.workflow
    if workflow is None:
        return state
    for t in candidates(workflow, state.workflow_state, trigger):
        if guard_passes(t.guard, state, inp):
            move = WorkflowMove(
                source=t.source,
                target=t.target,
                step=state.step,
                trigger=trigger,
                guard=t.guard,
                tool_call_id=inp.tool_call_id if isinstance(inp, ToolCallCompleted) else "",
                at=inp.timestamp,
            )
            return replace(state, workflow_state=t.target, audit=(*state.audit, move))
    return state
