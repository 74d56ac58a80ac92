"""What waits for a person in a session and below it (``pending_approvals``), and what a decision taken at a
session becomes there (``decision_inputs``): pure projections of the state."""

from __future__ import annotations

import msgspec

import agent_core as ac

from ._acting import acting
from ._build import T0, fold
from .test_tool_call_input_required import asks, one_call_running


def child_waits(call_id: str, child: str, at: int) -> ac.ToolCallInputRequired:
    """``call_id`` runs the child session ``child``, whose call ``w1`` waits for approval."""
    requests = ac.approval_requests(
        fold(ac.initial_state(), *_child_inputs(child))  # the child's own state, as its caller's tool reads it
    )
    return ac.ToolCallInputRequired(timestamp=at, tool_call_id=call_id, requests=requests)


def _child_inputs(child: str) -> tuple[ac.AgentInput, ...]:
    gated = ac.ToolDefinition(name="write", requires_approval=True)
    return (
        ac.SessionStarted(timestamp=T0, session_id=child, config=ac.AgentConfig(), tools=(gated,)),
        ac.UserMessageReceived(timestamp=T0, message_id="u1", content="go"),
        ac.ReActObserved(
            timestamp=T0 + 1,
            called_llm_at=T0,
            observation=ac.ContinueReAct(tool_calls={"w1": ac.ToolCallRequest(name="write", parameters="{}")}),
        ),
    )


def test_a_sessions_own_waiting_call_is_listed_with_a_path_of_one() -> None:
    [waiting] = ac.pending_approvals(acting())
    assert waiting == ac.PendingApproval(
        address=f"{acting().session_id}/t3",
        path=(acting().session_id,),
        tool_call_id="t3",
        tool="refund",
        arguments="{}",
    )


def test_a_childs_waiting_call_is_listed_through_the_call_that_runs_it_and_decided_there() -> None:
    state = fold(one_call_running(), child_waits("t1", "s:t1", T0 + 4))
    [waiting] = ac.pending_approvals(state)
    assert (waiting.address, waiting.path, waiting.via, waiting.tool) == (
        "s:t1/w1",
        (state.session_id, "s:t1"),
        "t1",
        "write",
    )
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL
    [inp] = ac.decision_inputs(state, {"s:t1/w1": ac.Decision(approve=False, reason="no")}, T0 + 5)
    assert isinstance(inp, ac.ToolCallInputProvided) and inp.tool_call_id == "t1"
    assert ac.decisions_in(inp.responses) == {"s:t1/w1": ac.Decision(approve=False, reason="no")}
    assert ac.pending_approvals(fold(state, inp)) == ()  # answered: the call runs again


def test_a_tools_own_questions_are_not_approvals_and_other_answers_not_decisions() -> None:
    state = fold(one_call_running(), asks())
    assert ac.pending_approvals(state) == ()
    assert ac.decisions_in('{"account":{"action":"accept","content":{}}}') == {}
    assert ac.decisions_in("not json") == {}


def test_an_address_that_names_nothing_waiting_becomes_an_input_the_reducer_refuses() -> None:
    state = acting()
    [inp] = ac.decision_inputs(state, {"s:t9/w1": ac.Decision(approve=True)}, T0 + 5)
    assert inp == ac.ToolCallApproved(timestamp=T0 + 5, tool_call_id="s:t9/w1")
    assert ac.check(state, inp) is not None
    [own] = ac.decision_inputs(state, {"t3": ac.Decision(approve=True)}, T0 + 5)  # an own call by its id alone
    assert own == ac.ToolCallApproved(timestamp=T0 + 5, tool_call_id="t3")
    assert msgspec.json.decode(ac.approval_requests(state))[f"{state.session_id}/t3"]["path"] == [state.session_id]
