"""Rules on proposed calls: every verdict leads to its documented outcome."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, ask, fold, rejected, started, user


@ac.register_rule("test-no-root")
def _no_root(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    """retry for a path at the root, ask for anything under /etc, stop for /boot."""
    path = call.arguments.get("path", "") if isinstance(call.arguments, dict) else ""
    if path == "/":
        return ac.Verdict(kind="retry", reason="the root is not a file")
    if path.startswith("/etc"):
        return ac.Verdict(kind="ask", reason="system configuration")
    if path.startswith("/boot"):
        return ac.Verdict(kind="stop", reason="never touch /boot")
    return ac.ALLOW


def in_turn(**config: object) -> ac.AgentState:
    start = ac.SessionStarted(
        timestamp=T0,
        session_id="s1",
        tools=(ac.ToolDefinition(name="search"),),
        config=ac.AgentConfig(rules=("test-no-root",), **{"max_turn_ms": None, **config}),  # type: ignore[arg-type]
    )
    return fold(ac.initial_state(), start, user("u1", at=T0 + 1))


def test_allow_runs_the_call() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='search:{"path":"/home"}'))
    assert list(ac.effects_at(state)) == ["call-tool:t1"]


def test_retry_refuses_the_call_with_the_reason_and_the_model_tries_again() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='search:{"path":"/"}'))
    assert state.tool_calls["t1"].result == ac.ToolFailure(
        error="refused by rule 'test-no-root': the root is not a file; try a different call"
    )
    assert ac.phase(state) is ac.Phase.THINKING


def test_ask_waits_for_a_person_who_may_approve() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='search:{"path":"/etc/hosts"}'))
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL
    state = fold(state, ac.ToolCallApproved(timestamp=T0 + 3, tool_call_id="t1"))
    assert list(ac.effects_at(state)) == ["call-tool:t1"]


def test_stop_ends_the_turn_failed_and_runs_nothing_of_the_batch() -> None:
    state = fold(in_turn(on_budget_exhausted="final-answer"), ask(at=T0 + 2, t1="search", t2='search:{"path":"/boot"}'))
    assert state.turn is None
    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "rule:test-no-root")
    assert state.last_outcome.detail == "rule 'test-no-root' stopped the turn: never touch /boot"
    assert all(state.tool_calls[i].status == "completed" for i in ("t1", "t2"))


def test_an_unknown_rule_is_refused_with_the_known_ones() -> None:
    rejection = rejected(
        ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s1", config=ac.AgentConfig(rules=("nope",)))
    )
    assert rejection.code == "unknown-rule"
    assert rejection.message == (
        "rule(s) 'nope' named by the session's config.rules are not registered in this process; "
        f"registered rules: {', '.join(ac.known_rules())}; register it with register_rule() "
        "before the session starts, or fix the name"
    )
    assert "test-no-root" in rejection.message


def test_a_session_without_rules_is_unchanged() -> None:
    state = fold(started(), user("u1", at=T0 + 1), ask(at=T0 + 2, t1='search:{"path":"/"}'))
    assert list(ac.effects_at(state)) == ["call-tool:t1"]


def test_registering_a_name_twice_is_refused() -> None:
    try:
        ac.register_rule("test-no-root")(lambda call, state: ac.ALLOW)
    except ValueError as error:
        assert "rule 'test-no-root' is already registered to _no_root" in str(error)
    else:
        raise AssertionError("expected a ValueError")


ac.register_rule("test-gate-every-2")(ac.interrupt_every(2))


def test_the_interrupt_gate_makes_every_nth_model_calls_calls_wait_for_a_person() -> None:
    start = ac.SessionStarted(
        timestamp=T0,
        session_id="s1",
        tools=(ac.ToolDefinition(name="search"),),
        config=ac.AgentConfig(rules=("test-gate-every-2",)),
    )
    state = fold(ac.initial_state(), start, user("u1", at=T0 + 1), ask(at=T0 + 2, t1='search:{"q":1}'))
    assert ac.phase(state) is ac.Phase.ACTING  # model call 1 runs on
    state = fold(
        state,
        ac.ToolCallCompleted(timestamp=T0 + 3, tool_call_id="t1", result=ac.ToolSuccess(content="x")),
        ask(at=T0 + 4, t2='search:{"q":2}'),
    )
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL  # model call 2 waits for a person
    state = fold(state, ac.ReActCancelled(timestamp=T0 + 5, reason="abort"))
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"


def test_the_interrupt_gate_needs_a_positive_period() -> None:
    try:
        ac.interrupt_every(0)
    except ValueError as error:
        assert str(error) == "expected model_calls of 1 or more, got 0"
    else:
        raise AssertionError("expected a ValueError")


def test_arguments_too_deep_to_parse_reach_the_rule_as_none_not_as_a_crash() -> None:
    deep = "[" * 100_000
    state = fold(in_turn(), ask(at=T0 + 2, t1=f"search:{deep}"))
    assert list(ac.effects_at(state)) == ["call-tool:t1"]  # the rule allowed it; the tool will refuse the JSON
