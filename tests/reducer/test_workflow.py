"""Workflows in the reducer: checked at ``session-started``, offered tools, refused calls, guarded moves."""

from __future__ import annotations

import pytest

import agent_core as ac

from ._build import T0, ask, fold, ok, rejected, user

READ = ac.ToolDefinition(name="read_file")
PLAN = ac.ToolDefinition(name="propose_plan")
WRITE = ac.ToolDefinition(name="write_file")
DELETE = ac.ToolDefinition(name="delete_file")
TOOLS = (READ, PLAN, WRITE, DELETE)


@ac.register_guard("test-plan-is-long")
def _plan_is_long(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    assert isinstance(trigger, ac.ToolCallCompleted)
    return len(state.tool_calls[trigger.tool_call_id].parameters) > 20


@ac.register_guard("test-never")
def _never(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    return False


WORKFLOW = ac.Workflow(
    states=(
        ac.WorkflowState(name="planning", tools=("read_file", "propose_plan"), approval=("propose_plan",)),
        ac.WorkflowState(name="building", tools=("read_file", "write_file", "delete_file"), approval=("delete_file",)),
        ac.WorkflowState(name="review", tools=("read_file",)),
    ),
    initial="planning",
    transitions=(
        ac.WorkflowTransition(source="planning", target="review", tool="propose_plan", guard="test-never", priority=9),
        ac.WorkflowTransition(source="planning", target="building", tool="propose_plan"),
        ac.WorkflowTransition(
            source="planning", target="review", tool="propose_plan", guard="test-plan-is-long", priority=5
        ),
    ),
)


def start(workflow: ac.Workflow | None = WORKFLOW) -> ac.SessionStarted:
    return ac.SessionStarted(
        timestamp=T0, session_id="s1", tools=TOOLS, config=ac.AgentConfig(workflow=workflow, max_turn_ms=None)
    )


def in_turn() -> ac.AgentState:
    return fold(ac.initial_state(), start(), user("u1", "add a README", at=T0 + 1))


def test_a_session_starts_in_the_initial_state_and_is_offered_only_its_tools() -> None:
    state = in_turn()
    assert state.workflow_state == "planning"
    assert [tool.name for tool in ac.llm_context(state).tools] == ["read_file", "propose_plan"]


def test_a_call_outside_the_state_is_not_run_and_the_model_sees_why() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="write_file", t2="read_file"))
    assert state.tool_calls["t1"].result == ac.ToolFailure(
        error="tool 'write_file' is not allowed in workflow state 'planning' (tool call 't1'); "
        "tools valid in 'planning': read_file, propose_plan"
    )
    assert list(ac.effects_at(state)) == ["call-tool:t2"]


def test_a_state_can_ask_approval_for_a_tool_that_needs_none_elsewhere() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='propose_plan:{"p":1}'))
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL


def test_guards_are_tried_by_priority_and_the_first_that_passes_wins() -> None:
    short = fold(
        in_turn(), ask(at=T0 + 2, t1='propose_plan:{"p":1}'), ac.ToolCallApproved(timestamp=T0 + 3, tool_call_id="t1")
    )
    state = fold(short, ok("t1", at=T0 + 4))
    assert state.workflow_state == "building"
    assert state.audit == (
        ac.WorkflowMove(
            source="planning", target="building", step=5, trigger="tool:propose_plan", tool_call_id="t1", at=T0 + 4
        ),
    )
    assert [tool.name for tool in ac.llm_context(state).tools] == ["read_file", "write_file", "delete_file"]

    long = fold(
        in_turn(),
        ask(at=T0 + 2, t1='propose_plan:{"plan":"write the README"}'),
        ac.ToolCallApproved(timestamp=T0 + 3, tool_call_id="t1"),
        ok("t1", at=T0 + 4),
    )
    assert (long.workflow_state, long.audit[0].guard) == ("review", "test-plan-is-long")


def test_a_failed_call_moves_nothing() -> None:
    state = fold(
        in_turn(),
        ask(at=T0 + 2, t1="propose_plan"),
        ac.ToolCallApproved(timestamp=T0 + 3, tool_call_id="t1"),
        ac.ToolCallCompleted(timestamp=T0 + 4, tool_call_id="t1", result=ac.ToolFailure(error="no")),
    )
    assert (state.workflow_state, state.audit) == ("planning", ())


def test_a_workflow_naming_an_unknown_guard_is_refused_with_the_known_ones() -> None:
    bad = ac.Workflow(
        states=WORKFLOW.states,
        initial="planning",
        transitions=(ac.WorkflowTransition(source="planning", target="building", tool="propose_plan", guard="nope"),),
    )
    rejection = rejected(ac.initial_state(), start(bad))
    assert rejection.code == "unknown-guard"
    assert rejection.message == (
        "guard(s) 'nope' named by the session's workflow are not registered in this process; "
        f"registered guards: {', '.join(ac.known_guards())}; register it with register_guard() "
        "before the session starts, or fix the name"
    )


@pytest.mark.parametrize(
    ("workflow", "expected"),
    [
        (
            ac.Workflow(states=(ac.WorkflowState(name="a"),), initial="b"),
            "initial state 'b' is not declared; declared: a; fix the workflow",
        ),
        (
            ac.Workflow(states=(ac.WorkflowState(name="a", tools=("rm",)),), initial="a"),
            "state 'a' names tool 'rm', which session-started does not declare (declared tools: delete_file, "
            "propose_plan, read_file, write_file); fix the workflow",
        ),
        (
            ac.Workflow(
                states=(ac.WorkflowState(name="a"),),
                initial="a",
                transitions=(ac.WorkflowTransition(source="a", target="z", tool="read_file"),),
            ),
            "transition 'a' -> 'z' names undeclared state 'z'; fix the workflow",
        ),
    ],
)
def test_an_inconsistent_workflow_is_refused_saying_what_is_wrong(workflow: ac.Workflow, expected: str) -> None:
    rejection = rejected(ac.initial_state(), start(workflow))
    assert (rejection.code, rejection.message) == ("invalid-workflow", expected)


def test_a_session_without_a_workflow_offers_every_tool() -> None:
    state = fold(ac.initial_state(), start(None), user("u1", at=T0 + 1))
    assert ac.llm_context(state).tools == TOOLS
    assert state.workflow_state == ""


def test_the_transition_table_and_the_mermaid_diagram() -> None:
    table = ac.transition_table(WORKFLOW)
    assert [(t.target, t.priority) for t in table] == [("review", 9), ("review", 5), ("building", 0)]
    assert ac.workflow_mermaid(WORKFLOW) == (
        "stateDiagram-v2\n"
        "    [*] --> planning\n"
        "    planning: planning: read_file, propose_plan (approval)\n"
        "    building: building: read_file, write_file, delete_file (approval)\n"
        "    review: review: read_file\n"
        "    planning --> review: propose_plan [test-never] (priority 9)\n"
        "    planning --> review: propose_plan [test-plan-is-long] (priority 5)\n"
        "    planning --> building: propose_plan\n"
    )
