"""``answer-rejected``: a model call answered with an output that did not validate, or with nothing."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import AnswerRejected
from .._output import MAX_OUTPUT_PROBLEMS, MAX_PROBLEM_CHARS, problems_text, rejection_note
from .._state import AgentState, Message, Turn
from ._common import reject, require_new_message_id, require_not_summarizing, require_thinking
from ._spend import turn_counted
from ._turns import append_message, end_turn, settle
from .on_re_act_observed import _counted, _validate

EMPTY_ANSWERS_RETRIED = 1
"""How many empty replies a turn asks again after (with a note); the next one fails it with ``empty-answer``."""


def on_answer_rejected(state: AgentState, inp: AnswerRejected) -> AgentState:
    """Count the call like any model call; then ask again with a note saying what was wrong (a user-role
    message the next call reads), or fail the turn with ``reason`` once its retries are spent.

    An invalid output is asked again ``max_output_retries`` times, an empty reply
    :data:`EMPTY_ANSWERS_RETRIED` time; a final answer (the budget is spent) is
    never asked again. The failed turn's detail lists the last problems.

    Under a compaction policy the call's reported input tokens are what the
    trigger reads next, as after any model call; a rejection cannot come while
    a summarization is under way (that call is the summarization).
    """
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    _validate(state, inp, turn)
    _check(state, inp)
    require_new_message_id(state, inp, inp.message_id)
    if state.compaction is not None:
        state = replace(state, compaction=replace(state.compaction, last_input_tokens=inp.usage.input_tokens))
    if inp.reason == "invalid-output":
        turn = turn_counted(state, turn, inp, output_retries=turn.output_retries + 1)
        spent = turn.output_retries > state.config.max_output_retries
        detail = f"the answer did not match the output schema ({_attempts(turn.output_retries)}): "
        detail += problems_text(inp.problems)
    else:
        turn = turn_counted(state, turn, inp, empty_answers=turn.empty_answers + 1)
        spent = turn.empty_answers > EMPTY_ANSWERS_RETRIED
        detail = f"the model's reply had no text and no tool call ({_attempts(turn.empty_answers)})"
    state = _counted(state, inp, turn)
    if spent or turn.final_answer:
        return end_turn(state, "failed", inp.reason, detail)
    return settle(_with_note(state, inp, turn))


def _with_note(state: AgentState, inp: AnswerRejected, turn: Turn) -> AgentState:
    """``state`` with the note appended; the window grows by one so it pushes no older context out."""
    note = Message(
        id=inp.message_id,
        role="user",
        content=rejection_note(inp.reason, inp.problems),
        seq=state.step,
        at=inp.timestamp,
    )
    messages, index = append_message(state, note)
    turn = replace(turn, context_window_size=turn.context_window_size + 1)
    return replace(state, messages=messages, message_index=index, turn=turn)


def _check(state: AgentState, inp: AnswerRejected) -> None:
    problems = inp.problems
    if inp.reason == "invalid-output":
        if not state.config.output_schema:
            reject(
                state,
                inp,
                "no-output-schema",
                "output-schema-set",
                "an invalid-output rejection needs a session with an output_schema, and this one has none; "
                "expected empty-answer or a re-act-observed",
            )
        if not problems:
            reject(
                state,
                inp,
                "no-problems",
                "problems-listed",
                "an invalid-output rejection lists no problems; expected at least one (where, what)",
            )
    elif problems:
        reject(state, inp, "unexpected-problems", "problems-only-for-output", "an empty-answer lists no problems")
    if len(problems) > MAX_OUTPUT_PROBLEMS:
        reject(
            state,
            inp,
            "too-many-problems",
            "problems-bounded",
            f"the rejection lists {len(problems)} problems; expected at most {MAX_OUTPUT_PROBLEMS} (the first ones)",
        )
    for position, problem in enumerate(problems):
        if len(problem.where) > MAX_PROBLEM_CHARS or len(problem.what) > MAX_PROBLEM_CHARS:
            reject(
                state,
                inp,
                "problem-too-long",
                "problems-bounded",
                f"problems[{position}] is longer than {MAX_PROBLEM_CHARS} characters in where or what; "
                "expected it shortened where the answer was validated",
            )


def _attempts(count: int) -> str:
    return "1 rejected answer" if count == 1 else f"{count} rejected answers"
