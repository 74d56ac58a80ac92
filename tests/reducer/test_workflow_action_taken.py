"""``workflow-action-taken``: an explicit action, such as a person's decision, moves the workflow."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, fold, llm_keys, rejected, user

TOOLS = (ac.ToolDefinition(name="read"), ac.ToolDefinition(name="write"))


@ac.register_guard("test-after-a-message")
def _after_a_message(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    return len(state.messages) > 0


WORKFLOW = ac.Workflow(
    states=(
        ac.WorkflowState(name="planning", tools=("read",)),
        ac.WorkflowState(name="building", tools=("read", "write")),
    ),
    initial="planning",
    transitions=(
        ac.WorkflowTransition(
            source="planning", target="building", action="plan-approved", guard="test-after-a-message"
        ),
        ac.WorkflowTransition(source="building", target="planning", action="replan"),
    ),
)


def started(workflow: ac.Workflow | None = WORKFLOW) -> ac.AgentState:
    config = ac.AgentConfig(workflow=workflow)
    return fold(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s1", tools=TOOLS, config=config))


def taken(action: str, at: int) -> ac.WorkflowActionTaken:
    return ac.WorkflowActionTaken(timestamp=at, action=action)


def test_an_action_moves_the_workflow_and_is_audited() -> None:
    state = fold(started(), user("u1", at=T0 + 1))
    before = llm_keys(state)
    state = fold(state, taken("plan-approved", T0 + 2))
    assert state.workflow_state == "building"
    assert state.audit == (
        ac.WorkflowMove(
            source="planning",
            target="building",
            step=3,
            trigger="action:plan-approved",
            guard="test-after-a-message",
            at=T0 + 2,
        ),
    )
    # The tools the next model call offers changed, so the call is derived anew.
    assert llm_keys(state) != before
    assert [tool.name for tool in ac.llm_context(state).tools] == ["read", "write"]


def test_an_action_no_transition_takes_is_refused_with_the_valid_ones() -> None:
    rejection = rejected(fold(started(), user("u1", at=T0 + 1)), taken("replan", T0 + 2))
    assert (rejection.code, rejection.message) == (
        "no-transition",
        "no transition from workflow state 'planning' is triggered by action 'replan'; "
        "actions valid in 'planning': plan-approved",
    )


def test_an_action_whose_guards_all_fail_is_refused() -> None:
    rejection = rejected(started(), taken("plan-approved", T0 + 1))
    assert (rejection.code, rejection.message) == (
        "guards-refused",
        "action 'plan-approved' in workflow state 'planning': no guard passed (tried test-after-a-message); "
        "expected the state those guards require",
    )


def test_an_action_without_a_workflow_is_refused() -> None:
    rejection = rejected(started(None), taken("plan-approved", T0 + 1))
    assert rejection.code == "no-workflow"
    assert rejection.message == (
        "action 'plan-approved' was taken, but session 's1' declares no workflow; "
        "expected a session whose session-started carries config.workflow"
    )


def test_a_transition_names_exactly_one_trigger() -> None:
    both = ac.Workflow(
        states=(ac.WorkflowState(name="a"),),
        initial="a",
        transitions=(ac.WorkflowTransition(source="a", target="a", tool="read", action="go"),),
    )
    start = ac.SessionStarted(timestamp=T0, session_id="s1", tools=TOOLS, config=ac.AgentConfig(workflow=both))
    rejection = rejected(ac.initial_state(), start)
    assert rejection.message == "transition 'a' -> 'a' must name exactly one of tool and action; fix the workflow"
