"""Tool retries as state: a failed attempt backs off through a timer and runs again with the same call id."""

from __future__ import annotations

from hypothesis import given, settings, target
from hypothesis import strategies as st

import agent_core as ac
from agent_core.testing import sessions

from ._build import SEARCH, T0, TOOLS, ask, fold, in_turn, ok, rejected, result_of, started, user

RETRIED = ac.ToolDefinition(
    name="search", idempotent=True, retry=ac.ToolRetry(max_attempts=3, base_ms=100, max_ms=150, on=("timeout",))
)
WITH_RETRY = (RETRIED, *TOOLS[1:])


def attempt_failed(call_id: str, code: str, *, at: int, error: str = "boom") -> ac.ToolCallCompleted:
    return ac.ToolCallCompleted(timestamp=at, tool_call_id=call_id, result=ac.ToolFailure(error=error, code=code))


def begun(call_id: str, *, at: int) -> ac.ToolCallStarted:
    return ac.ToolCallStarted(timestamp=at, tool_call_id=call_id)


def asking(**config: object) -> ac.AgentState:
    state = fold(started(tools=WITH_RETRY, **config), user("u1", at=T0 + 1))
    return fold(state, ask(at=T0 + 2, t1="search"), begun("t1", at=T0 + 3))


def test_a_retried_failure_backs_off_then_runs_again_with_the_same_id() -> None:
    state = fold(asking(), attempt_failed("t1", "timeout", at=T0 + 10))

    record = state.tool_calls["t1"]
    assert (record.status, record.attempt, record.retry_at, record.last_error) == ("pending", 1, T0 + 110, "boom")
    assert ac.effects_at(state) == {f"wait-until:retry:1:{T0 + 110}": ac.WaitUntil(at=T0 + 110, reason="retry")}
    assert state.turn is not None and state.turn.tool_call_count == 2  # the attempt counts toward the budget
    assert rejected(state, begun("t1", at=T0 + 11)).code == "call-backing-off"
    assert rejected(state, ac.TimerFired(timestamp=T0 + 109)).code == "timer-not-due"

    state = fold(state, ac.TimerFired(timestamp=T0 + 110))
    assert list(ac.effects_at(state)) == ["call-tool:t1#1"]  # a new attempt, a new key
    state = fold(state, begun("t1", at=T0 + 111), attempt_failed("t1", "timeout", at=T0 + 120))
    assert state.tool_calls["t1"].retry_at == T0 + 270  # 200 capped at max_ms 150
    state = fold(state, ac.TimerFired(timestamp=T0 + 270))
    assert list(ac.effects_at(state)) == [ac.call_tool_key("t1", 2)]
    state = fold(state, begun("t1", at=T0 + 271), ok("t1", at=T0 + 280))

    assert result_of(state, "t1") == ac.ToolSuccess(content="done")
    assert state.tool_calls["t1"].attempt == 2
    assert list(ac.effects_at(state)) == ["call-llm:1:1:0"]


def test_a_retry_starts_the_call_over_with_a_key_never_used_before() -> None:
    task = ac.ToolCallTaskCreated(timestamp=T0 + 4, tool_call_id="t1", task_id="task-1")
    state = fold(asking(), task, attempt_failed("t1", "timeout", at=T0 + 10))
    assert state.tool_calls["t1"].task_id == ""  # the new attempt does not follow the failed attempt's task
    state = fold(state, ac.TimerFired(timestamp=T0 + 110))
    keys = list(ac.effects_at(state))
    assert keys == ["call-tool:t1#1"] and ac.tool_call_id_of(keys[0]) == "t1"


def test_the_last_attempt_fails_for_good_and_the_model_reads_how_many_ran() -> None:
    state = fold(asking(), attempt_failed("t1", "timeout", at=T0 + 10))
    state = fold(state, ac.TimerFired(timestamp=T0 + 110), begun("t1", at=T0 + 111))
    state = fold(state, attempt_failed("t1", "timeout", at=T0 + 120))
    state = fold(state, ac.TimerFired(timestamp=T0 + 270), begun("t1", at=T0 + 271))
    state = fold(state, attempt_failed("t1", "timeout", at=T0 + 280))
    assert result_of(state, "t1") == ac.ToolFailure(error="boom (failed 3 of 3 attempts)", code="timeout")


def test_a_failure_the_policy_does_not_name_is_final_at_once() -> None:
    state = fold(asking(), attempt_failed("t1", "ValueError", at=T0 + 10))
    assert result_of(state, "t1") == ac.ToolFailure(error="boom", code="ValueError")
    assert state.tool_calls["t1"].attempt == 0


def test_a_tool_without_a_policy_never_retries() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="fetch"), begun("t1", at=T0 + 3))
    state = fold(state, attempt_failed("t1", "timeout", at=T0 + 4))
    assert result_of(state, "t1") == ac.ToolFailure(error="boom", code="timeout")


def test_a_spent_tool_call_budget_makes_the_failure_final() -> None:
    state = fold(asking(max_tool_calls=1), attempt_failed("t1", "timeout", at=T0 + 10))
    assert result_of(state, "t1") == ac.ToolFailure(
        error="boom (failed 1 attempts; not retried: the turn's budget of 1 tool calls is spent)", code="timeout"
    )


def test_a_turn_that_ends_during_the_backoff_closes_the_call_with_its_last_error() -> None:
    state = fold(asking(max_turn_ms=50), attempt_failed("t1", "timeout", at=T0 + 10))
    state = fold(state, ac.TimerFired(timestamp=T0 + 51))
    assert state.last_outcome is not None and state.last_outcome.reason == "timeout"
    failure = result_of(state, "t1")
    assert isinstance(failure, ac.ToolFailure)
    assert failure.error.startswith("boom (failed 1 attempts; not tried again: the turn was failed")


def test_a_policy_on_a_tool_that_is_not_idempotent_is_refused_unless_forced() -> None:
    risky = ac.ToolDefinition(name="refund", retry=ac.ToolRetry())
    start = ac.SessionStarted(timestamp=T0, session_id="s", tools=(risky,))
    assert rejected(ac.initial_state(), start).message == (
        "tool 'refund' has a retry policy but is not idempotent; expected idempotent=True (running it twice is "
        "safe), or force=True in its ToolRetry to retry it anyway"
    )
    forced = ac.ToolDefinition(name="refund", retry=ac.ToolRetry(force=True))
    assert started(tools=(forced,)).tools["refund"].retry == ac.ToolRetry(force=True)


def test_a_policy_out_of_range_is_refused_at_session_start() -> None:
    bad = ac.ToolDefinition(name="s", idempotent=True, retry=ac.ToolRetry(max_attempts=0, base_ms=-1, on=()))
    message = rejected(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s", tools=(bad,))).message
    assert message == (
        "expected the retry max_attempts of tool 's' of 1 or more, got 0; "
        f"expected the retry base_ms of tool 's' from 0 to {ac.MAX_DURATION_MS}, got -1; "
        "expected the retry of tool 's' to name the failures it retries (codes such as 'timeout' or exception "
        "names such as 'ConnectionError'), got on=[]"
    )


def test_a_log_without_retries_is_unchanged_by_them() -> None:
    plain = fold(in_turn(), ask(at=T0 + 2, t1="search"), begun("t1", at=T0 + 3))
    assert plain.tools["search"] == SEARCH and SEARCH.retry is None
    assert ac.encode_input(ac.ToolFailure(error="x")) == b'{"status":"failure","error":"x"}'  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(("timeout", "ValueError", "ok")), min_size=1, max_size=6), st.integers(0, 3))
def test_replay_equals_live_and_attempts_never_pass_the_policy(outcomes: list[str], budget: int) -> None:
    state = asking(max_tool_calls=budget + 1)
    log: list[ac.AgentInput] = []
    at = T0 + 10
    for outcome in outcomes:
        record = state.tool_calls["t1"]
        if record.status == "completed":
            break
        if record.retry_at is not None:
            timer = ac.TimerFired(timestamp=record.retry_at)
            state = fold(state, timer, begun("t1", at=record.retry_at))
            log += [timer, begun("t1", at=record.retry_at)]
            at = record.retry_at + 1
        step: ac.AgentInput = ok("t1", at=at) if outcome == "ok" else attempt_failed("t1", outcome, at=at)
        state = fold(state, step)
        log.append(step)
        at += 1
    record = state.tool_calls["t1"]
    assert record.attempt + 1 <= 3
    assert state.turn is None or state.turn.tool_call_count <= budget + 1
    start = asking(max_tool_calls=budget + 1)
    assert ac.state_hash(ac.replay(log, state=start)) == ac.state_hash(state)


FLAKY = (
    ac.ToolDefinition(name="search", idempotent=True, retry=ac.ToolRetry(max_attempts=3, base_ms=0, on=("timeout",))),
    ac.ToolDefinition(name="lookup", idempotent=True, retry=ac.ToolRetry(max_attempts=2, on=("ConnectionError",))),
    ac.ToolDefinition(name="fetch"),
)


@settings(max_examples=150, deadline=None)
@given(sessions(tools=FLAKY, min_steps=10, max_steps=40))
def test_random_sessions_with_retrying_tools_replay_and_keep_their_promises(inputs: list[ac.AgentInput]) -> None:
    live = ac.initial_state()
    for inp in inputs:
        after = ac.transition(live, inp)
        ac.check_invariants(after, live)
        live = after
        limit = live.config.max_tool_calls
        if live.turn is not None and limit is not None and not live.turn.final_answer:
            assert live.turn.tool_call_count <= limit  # an attempt never passes the budget
        for record in live.tool_calls.values():
            policy = live.tools[record.name].retry if record.name in live.tools else None
            assert record.attempt < (policy.max_attempts if policy is not None else 1)
    assert ac.state_hash(ac.replay(inputs)) == ac.state_hash(live)
    target(float(sum(record.attempt for record in live.tool_calls.values())))  # steer towards retried calls
