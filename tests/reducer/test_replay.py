"""``replay``: fold a sequence of inputs; the first invalid one raises with its index."""

from __future__ import annotations

import pytest

import agent_core as ac

from ._build import T0, answer, ask, fold, ok, started, user

SESSION = ac.SessionStarted(timestamp=T0, session_id="s1")


def inputs() -> list[ac.AgentInput]:
    return [
        SESSION,
        user("u1", "Where is my order?", at=T0 + 1),
        ask(at=T0 + 2, t1="lookup"),
        answer(at=T0 + 3),
        user("u2", "Thanks", at=T0 + 4),
    ]


def test_replay_equals_the_live_fold() -> None:
    live = fold(ac.initial_state(), *inputs())
    replayed = ac.replay(inputs())
    assert replayed == live
    assert ac.state_hash(replayed) == ac.state_hash(live)
    assert ac.encode_state(replayed) == ac.encode_state(live)


def test_replay_continues_from_a_given_state() -> None:
    head, tail = inputs()[:3], inputs()[3:]
    assert ac.replay(tail, ac.replay(head)) == ac.replay(inputs())


def test_replay_accepts_any_iterable() -> None:
    assert ac.replay(iter(inputs())) == ac.replay(inputs())


def test_replay_of_nothing_is_the_initial_state() -> None:
    assert ac.replay([]) == ac.initial_state()


def test_replay_raises_at_the_first_invalid_input_with_its_index() -> None:
    log = [*inputs(), ok("t1", at=T0 + 5), user("u1", at=T0 + 6)]  # entries 5 and 6 are both invalid
    with pytest.raises(ac.InvalidInput) as info:
        ac.replay(log)
    assert info.value.index == 5
    assert info.value.rejection.code == "call-completed"
    assert str(info.value) == (
        "input 5: tool call 't1' (lookup) is completed; expected a pending or running call "
        "[call-completed; valid now: answer-rejected, context-window-expanded, history-tool-calls-added, "
        "llm-call-failed, llm-message-completed, llm-message-started, pool-verdict-received, re-act-cancelled, "
        "re-act-observed, timer-fired, "
        "user-message-received]"
    )


def test_replay_index_counts_from_the_start_of_the_given_inputs() -> None:
    with pytest.raises(ac.InvalidInput) as info:
        ac.replay([user("u1", at=T0 + 1), user("u1", at=T0 + 2)], started())
    assert info.value.index == 1
    assert info.value.rejection.code == "duplicate-id"


def test_transition_errors_carry_no_index() -> None:
    with pytest.raises(ac.InvalidInput) as info:
        ac.transition(ac.initial_state(), user("u1", at=T0))
    assert info.value.index is None
    assert str(info.value).startswith("user-message-received is not accepted")
