"""Guards and rules that raise, or that this process has not registered: the reducer raises only InvalidInput."""

from __future__ import annotations

import msgspec

import agent_core as ac

from ._build import T0, ask, fold, ok, rejected, user

ACT = ac.ToolDefinition(name="act")
OTHER = ac.ToolDefinition(name="other")


@ac.register_rule("test-raises")
def _rule_raises(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    if isinstance(call.arguments, dict) and call.arguments.get("boom"):
        raise KeyError("boom")
    return ac.ALLOW


@ac.register_rule("test-returns-text")
def _rule_returns_text(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    return "allow"  # type: ignore[return-value]


@ac.register_guard("test-guard-raises")
def _guard_raises(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    raise RuntimeError("no plan in the state")


@ac.register_guard("test-guard-passes")
def _guard_passes(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    return True


WORKFLOW = ac.Workflow(
    states=(ac.WorkflowState(name="one", tools=("act", "other")), ac.WorkflowState(name="two", tools=("act",))),
    initial="one",
    transitions=(
        ac.WorkflowTransition(source="one", target="two", tool="act", guard="test-guard-raises", priority=1),
        ac.WorkflowTransition(source="one", target="two", tool="act", guard="test-guard-passes"),
        ac.WorkflowTransition(source="one", target="two", action="go", guard="test-guard-raises"),
        ac.WorkflowTransition(source="one", target="two", action="fine", guard="test-guard-passes"),
    ),
)


def in_turn(*, rules: tuple[str, ...] = (), workflow: ac.Workflow | None = None) -> ac.AgentState:
    config = ac.AgentConfig(rules=rules, workflow=workflow)
    start = ac.SessionStarted(timestamp=T0, session_id="s1", tools=(ACT, OTHER), config=config)
    return fold(ac.initial_state(), start, user("u1", at=T0 + 1))


def test_a_raising_rule_fails_the_turn_naming_the_rule_the_call_and_the_error() -> None:
    state = fold(in_turn(rules=("test-raises",)), ask(at=T0 + 2, t1="act", t2='act:{"boom":1}', t3="other"))
    detail = (
        "rule 'test-raises' raised KeyError: 'boom' on tool call 't2' (act); "
        "expected a pure rule that returns; fix it (it is called again on replay)"
    )
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="rule:test-raises-raised", detail=detail, turn=1, at=T0 + 2
    )
    for call_id in ("t1", "t2", "t3"):  # nothing of the batch runs
        assert state.tool_calls[call_id].result == ac.ToolFailure(error=f"not run: {detail}")
    assert ac.effects_at(state) == {}


def test_a_rule_returning_something_else_than_a_verdict_fails_the_turn_as_raising() -> None:
    state = fold(in_turn(rules=("test-returns-text",)), ask(at=T0 + 2, t1="act"))
    assert state.last_outcome is not None
    assert state.last_outcome.reason == "rule:test-returns-text-raised"
    assert state.last_outcome.detail == (
        "rule 'test-returns-text' raised TypeError: returned a str; expected a Verdict of kind allow, retry, ask, "
        "stop with a str reason on tool call 't1' (act); expected a pure rule that returns; fix it (it is called "
        "again on replay)"
    )


@ac.register_rule("test-reason-object")
def _rule_reason_object(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    return ac.Verdict(kind="stop", reason=object())  # type: ignore[arg-type]


def test_a_verdict_whose_reason_is_not_text_fails_the_turn_without_showing_the_object() -> None:
    state = fold(in_turn(rules=("test-reason-object",)), ask(at=T0 + 2, t1="act"))
    assert state.last_outcome is not None
    assert state.last_outcome.reason == "rule:test-reason-object-raised"
    assert "returned a Verdict of kind 'stop' and a reason of type object;" in state.last_outcome.detail
    assert "0x" not in state.last_outcome.detail  # no address: the same text on replay


def test_a_raising_guard_on_a_tool_success_fails_the_turn_and_the_workflow_stays() -> None:
    state = fold(in_turn(workflow=WORKFLOW), ask(at=T0 + 2, t1="act", t2="other"))
    state = fold(state, ok("t1", at=T0 + 3))
    assert (state.workflow_state, state.audit) == ("one", ())
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed",
        reason="guard:test-guard-raises-raised",
        detail="guard 'test-guard-raises' raised RuntimeError: no plan in the state on the success of tool call "
        "'t1' (act); expected a pure guard that returns; fix it (it is called again on replay)",
        turn=1,
        at=T0 + 3,
    )
    assert state.tool_calls["t2"].status == "completed"  # the other open call is closed with the turn
    assert ac.effects_at(state) == {}


def test_a_raising_guard_refuses_the_action_and_names_the_guard() -> None:
    state = in_turn(workflow=WORKFLOW)
    rejection = rejected(state, ac.WorkflowActionTaken(timestamp=T0 + 2, action="go"))
    assert (rejection.code, rejection.guard) == ("guard-raised", "guard-returns")
    assert rejection.message == (
        "guard 'test-guard-raises' raised RuntimeError: no plan in the state on action 'go' in workflow state "
        "'one'; expected a pure guard that returns; fix it (it is called again on replay)"
    )
    assert fold(state, ac.WorkflowActionTaken(timestamp=T0 + 2, action="fine")).workflow_state == "two"


def _renamed(state: ac.AgentState, old: bytes, new: bytes) -> ac.AgentState:
    """The state as a snapshot written by a process where the guard or rule ``old`` was called ``new``."""
    return ac.decode_state(ac.encode_state(state).replace(old, new))


def test_a_guard_missing_from_this_process_is_an_invalid_input_saying_what_to_do() -> None:
    state = fold(in_turn(workflow=WORKFLOW), ask(at=T0 + 2, t1="act"))
    loaded = _renamed(state, b'"test-guard-passes"', b'"gone-guard"')
    rejection = rejected(loaded, ok("t1", at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("unknown-guard", "guard-registered")
    assert rejection.message.startswith(
        "guard(s) 'gone-guard' named by the session's workflow are not registered in this process; registered guards: "
    )
    assert "test-guard-passes" in rejection.message
    assert rejection.message.endswith(
        "; import the module that registers them (register_guard()) before resuming or replaying the session"
    )


def test_a_rule_missing_from_this_process_is_an_invalid_input_saying_what_to_do() -> None:
    loaded = _renamed(in_turn(rules=("test-raises",)), b'"test-raises"', b'"gone-rule"')
    rejection = rejected(loaded, ask(at=T0 + 2, t1="act"))
    assert (rejection.code, rejection.guard) == ("unknown-rule", "rule-registered")
    assert rejection.message.startswith(
        "rule(s) 'gone-rule' named by the session's config.rules are not registered in this process; "
    )


def test_a_raising_rule_replays_to_the_same_state() -> None:
    inputs = [
        ac.SessionStarted(timestamp=T0, session_id="s1", tools=(ACT,), config=ac.AgentConfig(rules=("test-raises",))),
        user("u1", at=T0 + 1),
        ask(at=T0 + 2, t1='act:{"boom":1}'),
    ]
    live = fold(ac.initial_state(), *inputs)
    assert ac.replay(ac.decode_log(ac.encode_log(inputs))) == live
    assert msgspec.json.decode(ac.encode_state(live))["last_outcome"]["reason"] == "rule:test-raises-raised"


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot show myself")


@ac.register_rule("test-raises-unprintable")
def _rule_raises_unprintable(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    raise _Unprintable


@ac.register_rule("test-surrogate-reason")
def _rule_surrogate_reason(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    if isinstance(call.arguments, dict) and call.arguments.get("raise"):
        raise ValueError("no such file: report-\udcff.txt")
    return ac.Verdict(kind="retry", reason="file report-\udcff.txt is not UTF-8")


def test_a_rule_whose_error_cannot_be_printed_fails_the_turn_instead_of_escaping() -> None:
    state = fold(in_turn(rules=("test-raises-unprintable",)), ask(at=T0 + 2, t1="act"))
    assert state.last_outcome is not None
    assert state.last_outcome.detail == (
        "rule 'test-raises-unprintable' raised _Unprintable: (its message could not be shown: str() raised "
        "RuntimeError) on tool call 't1' (act); expected a pure rule that returns; fix it (it is called again on replay)"
    )
    assert ac.state_hash(state)


def test_text_a_rule_writes_into_the_state_has_its_lone_surrogates_replaced() -> None:
    state = fold(in_turn(rules=("test-surrogate-reason",)), ask(at=T0 + 2, t1="act"))
    assert state.tool_calls["t1"].result == ac.ToolFailure(
        error="refused by rule 'test-surrogate-reason': file report-\ufffd.txt is not UTF-8; try a different call"
    )
    state = fold(in_turn(rules=("test-surrogate-reason",)), ask(at=T0 + 2, t1='act:{"raise":1}'))
    assert state.last_outcome is not None and "no such file: report-\ufffd.txt" in state.last_outcome.detail
    assert ac.state_hash(state)
