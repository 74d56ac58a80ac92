"""``answer-rejected`` and the validated output of ``re-act-observed``: a refused answer leaves a note and asks
again, within bounds; a completed turn of a session with an output schema carries its output."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import agent_core as ac
from agent_core.testing import agent_configs, sessions

from ._build import T0, fold, in_turn, llm_keys, rejected

SCHEMA = '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}'
WRONG = (ac.OutputProblem(where="$.answer", what="Field required"),)


def refuse(at: int, note: str, *, reason: ac.RejectionReason = "invalid-output") -> ac.AnswerRejected:
    problems = WRONG if reason == "invalid-output" else ()
    return ac.AnswerRejected(
        timestamp=at,
        called_llm_at=at,
        reason=reason,
        message_id=note,
        problems=problems,
        usage=ac.Usage(input_tokens=10, output_tokens=5),
    )


def answer(at: int, output: str = "") -> ac.ReActObserved:
    return ac.ReActObserved(timestamp=at, called_llm_at=at, observation=ac.CompleteReAct(), output=output)


def test_an_invalid_output_leaves_a_note_and_asks_again_with_a_new_key() -> None:
    state = fold(in_turn(output_schema=SCHEMA), refuse(T0 + 2, "n1"))
    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:1:1:0"]
    note = state.messages[-1]
    assert (note.id, note.role) == ("n1", "user")
    assert note.content == (
        "Your answer did not match the required output schema:\n- at $.answer: Field required\n"
        "Answer again with only the JSON value that the schema describes, with these problems fixed."
    )
    assert ac.llm_context(state).entries[-1] == ac.ContextMessage(role="user", content=note.content)
    assert state.turn is not None and (state.turn.model_calls, state.turn.tokens) == (1, 15)


def test_the_validated_output_ends_the_turn_and_is_on_the_outcome() -> None:
    state = fold(in_turn(output_schema=SCHEMA), refuse(T0 + 2, "n1"), answer(T0 + 3, '{"answer":"42"}'))
    assert state.last_outcome == ac.TurnOutcome(kind="completed", turn=1, at=T0 + 3, output='{"answer":"42"}')


def test_past_max_output_retries_the_turn_fails_invalid_output_without_a_note() -> None:
    state = fold(in_turn(output_schema=SCHEMA, max_output_retries=1), refuse(T0 + 2, "n1"), refuse(T0 + 3, "n2"))
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "invalid-output")
    assert (
        outcome.detail == "the answer did not match the output schema (2 rejected answers): at $.answer: Field required"
    )
    assert "n2" not in state.message_index


def test_an_empty_answer_is_asked_again_once() -> None:
    state = fold(in_turn(), refuse(T0 + 2, "n1", reason="empty-answer"))
    assert ac.phase(state) is ac.Phase.THINKING
    state = fold(state, refuse(T0 + 3, "n2", reason="empty-answer"))
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "empty-answer")


def test_a_final_answer_is_never_asked_again() -> None:
    state = in_turn(output_schema=SCHEMA, max_model_calls=1, on_budget_exhausted="final-answer")
    state = fold(state, refuse(T0 + 2, "n1"))  # the budget is spent: one tool-less call is derived
    assert state.turn is not None and state.turn.final_answer
    state = fold(state, refuse(T0 + 3, "n2"))
    assert state.last_outcome is not None and state.last_outcome.reason == "invalid-output"


def test_what_a_session_cannot_accept_is_refused() -> None:
    plain, structured = in_turn(), in_turn(output_schema=SCHEMA)
    assert rejected(plain, refuse(T0 + 2, "n1")).code == "no-output-schema"
    assert rejected(plain, answer(T0 + 2, '{"answer":"x"}')).code == "unexpected-output"
    assert rejected(structured, answer(T0 + 2)).code == "bad-output"
    assert rejected(structured, answer(T0 + 2, "[1]")).message.startswith(
        "expected output to be a JSON object, got a JSON array"
    )
    no_problems = ac.AnswerRejected(timestamp=T0 + 2, called_llm_at=T0, reason="invalid-output", message_id="n")
    assert rejected(structured, no_problems).code == "no-problems"
    assert rejected(structured, refuse(T0 + 2, "u1")).code == "duplicate-id"  # the user's message id


STRUCTURED = agent_configs(output_schema=SCHEMA, max_output_retries=st.integers(0, 3))


@settings(max_examples=60, deadline=None)
@given(sessions(config=STRUCTURED, max_steps=40))
def test_rejections_are_bounded_and_a_log_replays_to_the_live_state(inputs: list[ac.AgentInput]) -> None:
    state = ac.initial_state()
    live = []
    for inp in inputs:
        before = state
        state = ac.transition(state, inp)
        live.append(ac.state_hash(state))
        if isinstance(inp, ac.AnswerRejected) and before.turn is not None:
            turn = state.turn
            limit = state.config.max_output_retries if inp.reason == "invalid-output" else 1
            if turn is not None and turn.number == before.turn.number:
                # Still open: within its bounds, with the note as the newest message.
                count = turn.output_retries if inp.reason == "invalid-output" else turn.empty_answers
                assert count <= limit and state.messages[-1].id == inp.message_id
            else:  # its retries spent, or a budget the counted call spent (its cost too, or left unpriced)
                outcome = state.last_outcome
                spent = ("max-model-calls", "max-tokens", "max-cost", "max-session-cost", "unpriced")
                assert outcome is not None and outcome.reason in (inp.reason, *spent)
        if isinstance(inp, ac.ReActObserved) and isinstance(inp.observation, ac.CompleteReAct):
            assert state.last_outcome is not None and json.loads(state.last_outcome.output) is not None
    encoded = ac.encode_log(inputs)
    assert ac.state_hash(ac.replay(ac.decode_log(encoded))) == live[-1]
