"""The turn deadline counts running time: waits for a person's approval do not count, and it is on by default."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import agent_core as ac
from agent_core.testing import agent_configs, sessions

from ._build import T0, ask, fold, in_turn, ok, started, user

RUNNING_LIMITS = st.sampled_from((1_000, 30_000, ac.DEFAULT_MAX_TURN_MS))
SESSIONS = sessions(config=agent_configs(max_turn_ms=RUNNING_LIMITS), min_steps=5, max_steps=40)


def approved(call_id: str, at: int) -> ac.ToolCallApproved:
    return ac.ToolCallApproved(timestamp=at, tool_call_id=call_id)


def test_a_turn_has_a_deadline_of_thirty_minutes_by_default() -> None:
    state = fold(started(max_turn_ms=ac.DEFAULT_MAX_TURN_MS), user("u1", "hi", at=T0 + 1))
    assert ac.AgentConfig().max_turn_ms == ac.DEFAULT_MAX_TURN_MS == 30 * 60 * 1000
    assert state.turn is not None and state.turn.deadline == T0 + 1 + 1_800_000
    assert ac.effects_at(state)[f"wait-until:deadline:1:{T0 + 1_800_001}"] == ac.WaitUntil(
        at=T0 + 1_800_001, reason="deadline"
    )


def test_none_switches_the_deadline_off() -> None:
    state = in_turn(max_turn_ms=None)
    assert state.turn is not None and state.turn.deadline is None
    assert not [key for key in ac.effects_at(state) if key.startswith("wait-until:")]


def test_a_config_encoded_without_the_field_gets_the_default_and_none_is_kept() -> None:
    assert ac.encode_input(ac.SessionStarted(timestamp=T0, session_id="s")) == ac.encode_input(
        ac.SessionStarted(timestamp=T0, session_id="s", config=ac.AgentConfig(max_turn_ms=ac.DEFAULT_MAX_TURN_MS))
    )
    off = ac.SessionStarted(timestamp=T0, session_id="s", config=ac.AgentConfig(max_turn_ms=None))
    assert b'"max_turn_ms":null' in ac.encode_input(off)
    decoded = ac.decode_input(ac.encode_input(off))
    assert isinstance(decoded, ac.SessionStarted) and decoded.config.max_turn_ms is None


def test_waiting_for_approval_pauses_the_deadline_and_moves_it_on_by_the_wait() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 1_001, r1="refund"))  # 1 s of running time
    assert state.turn is not None and (state.turn.deadline, state.turn.paused_at) == (T0 + 5_001, T0 + 1_001)
    assert ac.phase(state) == "awaiting-approval"
    assert ac.effects_at(state) == {}
    # An hour later a person approves: the 4 s left start now.
    state = fold(state, approved("r1", at=T0 + 3_601_001))
    assert state.turn is not None and (state.turn.deadline, state.turn.paused_at) == (T0 + 3_605_001, None)
    assert f"wait-until:deadline:1:{T0 + 3_605_001}" in ac.effects_at(state)
    rejection = ac.check(state, ac.TimerFired(timestamp=T0 + 3_605_000))
    assert rejection is not None and rejection.code == "timer-not-due"
    state = fold(state, ac.TimerFired(timestamp=T0 + 3_605_001))
    assert state.last_outcome is not None and (state.last_outcome.kind, state.last_outcome.reason) == (
        "failed",
        "timeout",
    )


def test_a_paused_deadline_is_never_due() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 2, r1="refund"))
    rejection = ac.check(state, ac.TimerFired(timestamp=T0 + 99_999))
    assert rejection is not None and rejection.code == "timer-not-due"
    assert rejection.message == "no timer is due at 100999; expected a time at or after a pending timer (none)"


def test_calls_still_running_beside_an_awaited_one_keep_the_deadline_running() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 2, t1="search", r1="refund"))
    assert ac.phase(state) == "acting"
    assert state.turn is not None and state.turn.paused_at is None
    state = fold(state, ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"), ok("t1", at=T0 + 4_003))
    assert ac.phase(state) == "awaiting-approval"  # only now does the wait begin
    assert state.turn is not None and state.turn.paused_at == T0 + 4_003


def test_a_deadline_that_passed_before_the_wait_began_is_not_paused() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 2, t1="search", r1="refund"))
    state = fold(state, ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"), ok("t1", at=T0 + 6_000))
    assert ac.phase(state) == "awaiting-approval"
    assert state.turn is not None and state.turn.paused_at is None  # the deadline's timer is due, not paused
    state = fold(state, ac.TimerFired(timestamp=T0 + 6_001))
    assert state.last_outcome is not None and state.last_outcome.reason == "timeout"


# --- properties -------------------------------------------------------------------


def steps(inputs: list[ac.AgentInput]) -> list[tuple[ac.AgentState, ac.AgentInput, ac.AgentState, int, bool]]:
    """Each step of the session (state before, input, state after) with the running time the turn open
    before the input has used by the input's time, and whether the state after is paused, counted
    independently of the reducer: the time between two inputs counts unless the state before the later
    one was paused; a turn is paused while it waits for approval only, if that wait began before its
    running time reached the limit (a deadline already passed is due, not paused)."""
    out = []
    state, used, paused = ac.initial_state(), 0, False
    for inp in inputs:
        before, state = state, ac.transition(state, inp)
        if before.turn is not None and not paused:
            used += inp.timestamp - before.timestamp
        used_by_input = used
        if state.turn is None or before.turn is None or before.turn.number != state.turn.number:
            used, paused = 0, False  # the turn ended (and maybe the next one opened) with this input
        limit = state.config.max_turn_ms
        if ac.phase(state) != "awaiting-approval" or state.turn is None or state.turn.deadline is None:
            paused = False
        elif not paused:
            paused = limit is not None and used < limit and ac.phase(before) != "awaiting-approval"
        out.append((before, inp, state, used_by_input, paused))
    return out


@settings(max_examples=150, deadline=None)
@given(SESSIONS)
def test_what_is_left_of_the_deadline_is_the_limit_minus_the_running_time(inputs: list[ac.AgentInput]) -> None:
    for before, _, state, used, paused in steps(inputs):
        turn = state.turn
        if turn is None or turn.deadline is None:
            continue  # between turns, or a final answer asked for after the deadline or a budget
        if before.turn is None or before.turn.number != turn.number:
            used = 0
        limit = state.config.max_turn_ms
        assert limit is not None
        assert (turn.paused_at is not None) == paused
        paused_for = state.timestamp - turn.paused_at if turn.paused_at is not None else 0
        assert turn.deadline + paused_for - state.timestamp == limit - used
        timers = [e.at for e in ac.effects_at(state).values() if isinstance(e, ac.WaitUntil) and e.reason == "deadline"]
        assert timers == ([] if paused else [turn.deadline])


@settings(max_examples=150, deadline=None)
@given(SESSIONS)
def test_the_deadline_trips_exactly_when_the_running_time_reaches_the_limit(inputs: list[ac.AgentInput]) -> None:
    for before, inp, state, used, _ in steps(inputs):
        if not isinstance(inp, ac.TimerFired) or before.turn is None or before.turn.deadline is None:
            continue
        limit = before.config.max_turn_ms
        assert limit is not None
        ended = state.turn is None or state.turn.number != before.turn.number  # a queued message may open the next
        tripped = ended or (state.turn is not None and state.turn.exhausted == "timeout")
        outcome = state.last_outcome
        if ended:
            assert outcome is not None and outcome.reason == "timeout" and outcome.at == inp.timestamp
        assert tripped == (used >= limit)


def test_a_budget_spent_while_the_deadline_is_paused_asks_for_the_final_answer_with_nothing_paused() -> None:
    config = {"max_turn_ms": 5_000, "max_model_calls": 1, "on_budget_exhausted": "final-answer"}
    state = fold(in_turn(**config), ask(at=T0 + 2, r1="refund"))
    assert state.turn is not None and state.turn.paused_at == T0 + 2
    state = fold(state, ac.ToolCallDenied(timestamp=T0 + 60_000, tool_call_id="r1", reason="no"))
    assert state.turn is not None and state.turn.final_answer and state.turn.exhausted == "max-model-calls"
    assert (state.turn.deadline, state.turn.paused_at) == (None, None)
    assert [key for key in ac.effects_at(state) if key.startswith("call-llm:")]


FINAL_ANSWER_SESSIONS = sessions(
    config=agent_configs(
        max_turn_ms=st.sampled_from((30_000, ac.DEFAULT_MAX_TURN_MS)),
        on_budget_exhausted="final-answer",
        max_model_calls=st.sampled_from((1, 1, 2)),
        max_identical_tool_calls=10,
    ),
    tools=(ac.ToolDefinition(name="refund", requires_approval=True),),  # every call waits for a person
    min_steps=5,
    max_steps=40,
)


@settings(max_examples=100, deadline=None)
@given(FINAL_ANSWER_SESSIONS)
def test_a_turn_asking_for_its_final_answer_has_nothing_paused(inputs: list[ac.AgentInput]) -> None:
    """A budget or the deadline trips, often while approvals are awaited: the deadline is gone, and no pause
    is left behind whichever input tripped it (a denial ending the wait, a timer, a model call)."""
    for _, _, state, _, _ in steps(inputs):
        turn = state.turn
        if turn is not None and (turn.final_answer or turn.deadline is None):
            assert turn.paused_at is None, (turn, ac.phase(state))
