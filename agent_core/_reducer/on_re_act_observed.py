"""``re-act-observed``: a model call finished, asking for tool calls or completing the turn."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import AnswerRejected, CompleteReAct, ReActObserved, ToolCallRequest
from .._output import output_value_problem
from .._rules import Judgement
from .._state import AgentState, Message, Turn
from ._common import reject, require_not_streaming, require_not_summarizing, require_thinking
from ._items import check_items
from ._records import record_requests, records
from ._spend import check_spend, session_spend, turn_counted
from ._stuck import Repeats, count_repeats
from ._turns import end_turn, exhaust, final_answer_used_tools, settle
from ._workflow import Tripped, judge_batch


def on_re_act_observed(state: AgentState, inp: ReActObserved) -> AgentState:
    """Count the call and its tokens; record requested tool calls, or close the turn as completed.

    Guards, in order: tools disabled for a final answer, the tool-call budget,
    stuck detection, a rule saying ``stop`` or raising. A guard that trips records the
    batch as failed (never run) and ends the turn, or asks for a final answer
    (a rule's stop always ends the turn). Each call is judged by the rules once.
    """
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    _validate(state, inp, turn)
    answered = check_items(state, inp)
    if state.compaction is not None:  # the trigger reads what the last call reported
        state = replace(state, compaction=replace(state.compaction, last_input_tokens=inp.usage.input_tokens))
    observation = inp.observation
    if isinstance(observation, CompleteReAct):
        if answered is not None:
            state = _with_items(state, answered, inp)
        return _complete(state, inp, turn)
    requests = observation.tool_calls
    verdict = _verdict(state, inp, turn, requests)
    if isinstance(verdict, Tripped):
        return _guarded(state, inp, turn, requests, verdict)
    return settle(_continue(state, inp, turn, requests, *verdict))


def _verdict(
    state: AgentState, inp: ReActObserved, turn: Turn, requests: dict[str, ToolCallRequest]
) -> tuple[Repeats, dict[str, Judgement]] | Tripped:
    """The guards, evaluated once: the turn's new repeat counts and the rules' judgement of each call,
    or the first guard that trips."""
    if turn.final_answer:
        return Tripped("final-answer", "tools are disabled: the turn's budget is spent and it must answer now")
    limit = state.config.max_tool_calls
    children = turn.children_spent.tool_calls if turn.children_spent else 0
    if limit is not None and turn.tool_call_count + children + len(requests) > limit:
        by_children = f", {children} of them by child sessions" if turn.children_spent else ""
        used = f"({turn.tool_call_count + children} used{by_children}, {len(requests)} asked)"
        return Tripped("max-tool-calls", f"the turn's budget of {limit} tool calls is spent {used}")
    config = state.config
    repeats, stuck = count_repeats(
        turn, state.tool_calls, requests, config.max_identical_tool_calls, config.stuck_window
    )
    if stuck:
        return Tripped("stuck", stuck)
    judged, stop = judge_batch(state, inp, requests)
    if stop is not None:
        return stop
    return repeats, judged


def _continue(
    state: AgentState,
    inp: ReActObserved,
    turn: Turn,
    requests: dict[str, ToolCallRequest],
    repeats: Repeats,
    judged: dict[str, Judgement],
) -> AgentState:
    """The common case, no guard tripped: count the call and record its requests in one new turn
    and one new state (each ``replace`` copies every field, so they are not chained)."""
    step = state.step + 1
    usage = inp.usage
    calls, log, opened, awaiting = records(state, turn, requests, step, inp.timestamp, judged, inp.items)
    turn = turn_counted(
        state,
        turn,
        inp,
        repeats=repeats,
        tool_call_ids=turn.tool_call_ids + tuple(requests),
        open_call_ids=opened,
        awaiting_ids=awaiting,
        tool_call_count=turn.tool_call_count + len(requests),
    )
    return replace(
        state,
        timestamp=inp.timestamp,
        step=step,
        turn=turn,
        called_llm_at=inp.called_llm_at,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
        tool_calls=calls,
        tool_call_log=log,
        cost=session_spend(state, inp.cost),
    )


def _counted(state: AgentState, inp: ReActObserved | AnswerRejected, turn: Turn) -> AgentState:
    """The state with the input's time and step, ``turn``, and the session's token counters."""
    usage = inp.usage
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        turn=turn,
        called_llm_at=inp.called_llm_at,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
        cost=session_spend(state, inp.cost),
    )


def _with_items(state: AgentState, message: Message, inp: ReActObserved) -> AgentState:
    """``state`` with the reply's items on the assistant message it answered with."""
    position = state.message_index[message.id]
    return replace(state, messages=state.messages.set(position, replace(message, items=inp.items)))


def _complete(state: AgentState, inp: ReActObserved, turn: Turn) -> AgentState:
    """Count the call and close the turn as completed, with the validated output in a session that asks for one.
    The turn's counters are kept (in ``last_outcome.spent``) only by a child session and a turn whose children
    spent, so only those count the last call into them."""
    if state.config.lineage is not None or turn.children_spent is not None:
        turn = turn_counted(state, turn, inp)
    return end_turn(_counted(state, inp, turn), "completed", turn.exhausted, output=inp.output)


def _guarded(
    state: AgentState, inp: ReActObserved, turn: Turn, requests: dict[str, ToolCallRequest], tripped: Tripped
) -> AgentState:
    """Count the call, record the batch as not run, and end the turn (or ask for a final answer)."""
    turn = turn_counted(state, turn, inp)
    state = record_requests(_counted(state, inp, turn), turn, requests, tripped.detail, inp.items)
    if tripped.reason == "final-answer":
        return final_answer_used_tools(state)
    if tripped.reason.startswith("rule:"):
        return end_turn(state, "failed", tripped.reason, tripped.detail)
    return exhaust(state, tripped.reason, tripped.detail)


def _validate(state: AgentState, inp: ReActObserved | AnswerRejected, turn: Turn) -> None:
    """The checks of a finished model call (shared by ``answer-rejected``), then of the observation."""
    require_not_streaming(state, inp, turn)
    if inp.called_llm_at > inp.timestamp:
        reject(
            state,
            inp,
            "called-after-observed",
            "call-precedes-observation",
            f"called_llm_at ({inp.called_llm_at}) is later than the input's timestamp ({inp.timestamp}); "
            "expected the time the model call started",
        )
    check_spend(state, inp)
    if not isinstance(inp, ReActObserved):
        return
    _validate_output(state, inp)
    if isinstance(inp.observation, CompleteReAct):
        return
    requests = inp.observation.tool_calls
    if not requests:
        reject(
            state,
            inp,
            "no-tool-calls",
            "continue-has-calls",
            "continue-re-act carries no tool calls; expected at least one, or complete-re-act",
        )
    for call_id in requests:
        if not call_id:
            reject(state, inp, "empty-id", "tool-call-id-present", "expected non-empty tool call ids, got an empty one")
        if call_id in state.tool_calls:
            reject(
                state,
                inp,
                "duplicate-id",
                "tool-call-id-unique",
                f"tool call id {call_id!r} is already used in this session; expected new ids",
            )


def _validate_output(state: AgentState, inp: ReActObserved) -> None:
    """A completed turn of a session with an output schema carries its validated output; nothing else does."""
    wanted = bool(state.config.output_schema) and isinstance(inp.observation, CompleteReAct)
    if not wanted:
        if inp.output:
            expected = "no output schema" if not state.config.output_schema else "tool calls, which end no turn"
            reject(
                state,
                inp,
                "unexpected-output",
                "output-only-with-schema",
                f"the observation carries an output, but it has {expected}; expected an empty output",
            )
        return
    problem = "expected the answer validated against the session's output_schema, got none" if not inp.output else None
    problem = problem or output_value_problem(inp.output)
    if problem is not None:
        reject(
            state,
            inp,
            "bad-output",
            "output-validated",
            f"{problem}; refuse an answer that does not validate with answer-rejected instead",
        )
