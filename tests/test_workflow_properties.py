"""Properties of workflows and rules over random sessions drawn by ``agent_core.testing``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import agent_core as ac
from agent_core.testing import RAISING_GUARD, VERDICT_RULE, sessions, tool_lists, workflows

# Two tools at most, so that transitions often share a trigger and their priorities matter.
WORKFLOW_SESSIONS = sessions(
    workflow=True, rules=(VERDICT_RULE,), tools=tool_lists(min_size=1, max_size=2), max_steps=40
)


def _offered_here(state: ac.AgentState) -> tuple[str, ...]:
    assert state.config.workflow is not None
    return state.config.workflow.state(state.workflow_state).tools


@given(WORKFLOW_SESSIONS)
def test_a_tool_outside_the_current_state_is_never_offered_and_never_runs(inputs: list[ac.AgentInput]) -> None:
    state = ac.transition(ac.initial_state(), inputs[0])
    allowed_when_proposed: dict[str, bool] = {}
    for inp in inputs[1:]:
        offered = _offered_here(state)
        assert all(tool.name in offered for tool in ac.llm_context(state).tools)
        after = ac.transition(state, inp)
        if isinstance(inp, ac.ReActObserved) and isinstance(inp.observation, ac.ContinueReAct):
            for call_id, request in inp.observation.tool_calls.items():
                allowed_when_proposed[call_id] = request.name in offered
        for effect in ac.effects_at(after).values():
            if isinstance(effect, ac.CallTool):
                assert allowed_when_proposed[effect.tool_call_id], effect
        state = after


TWO_TOOLS = (ac.ToolDefinition(name="read"), ac.ToolDefinition(name="write"))


@given(workflows(TWO_TOOLS), st.sampled_from(("read", "write")), st.integers(10, 11))
def test_guards_are_evaluated_in_priority_order_and_every_move_is_audited(
    workflow: ac.Workflow, tool: str, done_at: int
) -> None:
    _check_first_decisive_guard(workflow, tool, done_at)


@given(workflows(TWO_TOOLS), st.sampled_from(("read", "write")), st.integers(10, 11), st.integers(0, 2))
def test_a_raising_guard_fails_the_turn_unless_a_guard_tried_before_it_passes(
    workflow: ac.Workflow, tool: str, done_at: int, priority: int
) -> None:
    """The drawn workflow plus a raising guard on the tool's success, from an initial state that offers it."""
    states = tuple(
        replace(ws, tools=(*ws.tools, tool)) if ws.name == workflow.initial and tool not in ws.tools else ws
        for ws in workflow.states
    )
    raising = ac.WorkflowTransition(
        source=workflow.initial, target=workflow.initial, tool=tool, guard=RAISING_GUARD, priority=priority
    )
    _check_first_decisive_guard(
        replace(workflow, states=states, transitions=(*workflow.transitions, raising)), tool, done_at
    )


def _check_first_decisive_guard(workflow: ac.Workflow, tool: str, done_at: int) -> None:
    """After a success of ``tool``, the first guard (by priority) that passes moves the workflow; one
    that raises first fails the turn and nothing moves."""
    config = ac.AgentConfig(workflow=workflow)
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", tools=TWO_TOOLS, config=config),
            ac.UserMessageReceived(timestamp=2, message_id="m", content="go"),
            ac.ReActObserved(
                timestamp=3,
                called_llm_at=3,
                observation=ac.ContinueReAct(tool_calls={"t1": ac.ToolCallRequest(name=tool)}),
            ),
        ]
    )
    if state.tool_calls["t1"].status == "completed":  # the initial state does not offer the tool
        return
    if state.tool_calls["t1"].status == "awaiting-approval":
        state = ac.transition(state, ac.ToolCallApproved(timestamp=4, tool_call_id="t1"))
    done = ac.ToolCallCompleted(timestamp=done_at, tool_call_id="t1", result=ac.ToolSuccess(content="ok"))
    after = ac.transition(state, done)
    tried = sorted(
        (t for t in workflow.transitions if t.source == workflow.initial and t.tool == tool), key=lambda t: -t.priority
    )
    # The first guard that passes decides, or the first that raises (no later guard is asked).
    decided = next((t for t in tried if t.guard == RAISING_GUARD or _passes(t.guard, done)), None)
    if decided is None or decided.guard == RAISING_GUARD:
        assert (after.workflow_state, after.audit) == (workflow.initial, ())
        raised = decided is not None
        assert (after.turn is None) == raised
        if raised:
            assert after.last_outcome is not None
            assert (after.last_outcome.kind, after.last_outcome.reason) == ("failed", f"guard:{RAISING_GUARD}-raised")
        return
    assert after.workflow_state == decided.target
    assert after.audit == (
        ac.WorkflowMove(
            source=workflow.initial,
            target=decided.target,
            step=after.step,
            trigger=f"tool:{tool}",
            guard=decided.guard,
            tool_call_id="t1",
            at=done_at,
        ),
    )


def _passes(guard: str, trigger: ac.AgentInput) -> bool:
    return guard in ("", "testing:always") or (guard == "testing:even-time" and trigger.timestamp % 2 == 0)


@given(WORKFLOW_SESSIONS)
def test_replay_of_a_workflow_session_equals_the_live_run(inputs: list[ac.AgentInput]) -> None:
    live = ac.initial_state()
    for inp in inputs:
        after = ac.transition(live, inp)
        ac.check_invariants(after, live)
        live = after
    replayed = ac.replay(ac.decode_log(ac.encode_log(inputs)))
    assert replayed == live
    assert ac.state_hash(replayed) == ac.state_hash(live)
    assert ac.decode_state(ac.encode_state(live)) == live


VERDICTS = st.sampled_from(("allow", "retry", "ask", "stop", "raise"))


@given(st.lists(VERDICTS, min_size=1, max_size=4))
def test_every_rule_verdict_leads_to_its_documented_outcome(verdicts: list[str]) -> None:
    tool = ac.ToolDefinition(name="act")
    config = ac.AgentConfig(rules=(VERDICT_RULE,), max_identical_tool_calls=10, stuck_window=0)  # no stuck verdict
    start = ac.SessionStarted(timestamp=1, session_id="s", tools=(tool,), config=config)
    asked = {f"t{i}": ac.ToolCallRequest(name="act", parameters=f'{{"verdict":"{v}"}}') for i, v in enumerate(verdicts)}
    state = ac.replay(
        [
            start,
            ac.UserMessageReceived(timestamp=2, message_id="m", content="go"),
            ac.ReActObserved(timestamp=3, called_llm_at=3, observation=ac.ContinueReAct(tool_calls=asked)),
        ]
    )
    # Each call is judged once, in order; the first stop or raise ends the turn.
    ending = next((v for v in verdicts if v in ("stop", "raise")), None)
    if ending is not None:
        assert state.turn is None and state.last_outcome is not None
        reason = f"rule:{VERDICT_RULE}" + ("-raised" if ending == "raise" else "")
        assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", reason)
        assert ac.effects_at(state) == {}
        return
    assert state.turn is not None
    for call_id, verdict in zip(asked, verdicts, strict=True):
        record = state.tool_calls[call_id]
        expected = {"allow": "pending", "retry": "completed", "ask": "awaiting-approval"}[verdict]
        assert record.status == expected
        if verdict == "retry":
            assert record.result == ac.ToolFailure(
                error=f"refused by rule {VERDICT_RULE!r}: as asked; try a different call"
            )


@given(
    sessions(workflow=True, rules=(VERDICT_RULE,), tools=tool_lists(min_size=1, max_size=2), max_steps=40, invalid=True)
)
def test_a_raising_guard_or_rule_never_escapes_the_reducer_and_names_itself(inputs: list[ac.AgentInput]) -> None:
    """The kit's workflows draw a guard that raises and its rule raises on request: the reducer raises
    only InvalidInput, and a turn ended by a raise names the guard or rule and its error."""
    state = ac.initial_state()
    for inp in inputs:
        try:
            after = ac.transition(state, inp)
        except ac.InvalidInput:
            continue
        outcome = after.last_outcome
        if outcome is not None and outcome is not state.last_outcome and outcome.reason.endswith("-raised"):
            kind, _, name = outcome.reason.removesuffix("-raised").partition(":")
            assert (kind, name) in {("rule", VERDICT_RULE), ("guard", RAISING_GUARD)}
            assert f"{kind} {name!r} raised ValueError: raised as asked on " in outcome.detail
            assert outcome.kind == "failed"
        state = after
