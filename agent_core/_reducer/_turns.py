"""A turn's life: appending messages, opening a turn, the budget guards, and ending it with an outcome."""

from __future__ import annotations

from collections.abc import Callable

from immutables import Map
from msgspec.structs import replace

from .._config import AgentConfig
from .._cost import format_nanos
from .._inputs import Spend, ToolFailure
from .._state import (
    PAST_TOOL_CALLS_LISTED,
    AgentState,
    Message,
    OutcomeKind,
    PastToolCall,
    ToolCallRecord,
    Turn,
    TurnOutcome,
)
from .._table import Table, grown
from .._vector import Vector
from ._compaction import TooLong, compact_if_due


def append_message(state: AgentState, message: Message) -> tuple[Vector[Message], Map[str, int] | Table[str, int]]:
    """The messages and their index with ``message`` appended (the common case of :func:`append_messages`)."""
    messages = state.messages
    return messages.append(message), grown(state.message_index.set(message.id, len(messages)))


def append_messages(
    state: AgentState, new: tuple[Message, ...]
) -> tuple[Vector[Message], Map[str, int] | Table[str, int]]:
    """The messages and their index with ``new`` appended in order."""
    if len(new) == 1:
        return append_message(state, new[0])
    messages, index = state.messages, state.message_index
    n = len(messages)
    for message in new:
        messages = messages.append(message)
        index = index.set(message.id, n)
        n += 1
    return messages, grown(index)


def open_turn(state: AgentState, new: tuple[Message, ...]) -> AgentState:
    """Append the user message(s) ``new`` and open a turn whose window shows at least all of them.

    A budget already spent at the start (``max_model_calls=0``, ``max_tokens=0``)
    trips at once. ``state`` already carries the input's timestamp and step.
    """
    messages, index = append_messages(state, new)
    config = state.config
    number = state.turns + 1
    window = min(max(config.initial_context_window, len(new)), len(messages))
    deadline = state.timestamp + config.max_turn_ms if config.max_turn_ms is not None else None
    turn = Turn(number=number, started_at=state.timestamp, context_window_size=window, deadline=deadline)
    # The turn's first model call is derived now, so the budgets apply to it too (a budget of 0).
    return settle(replace(state, messages=messages, message_index=index, turn=turn, turns=number))


def _past_calls(state: AgentState, turn: Turn) -> tuple[PastToolCall, ...]:
    """``state.past_calls`` with the calls the ending ``turn`` requested (the newest in the log) in front."""
    calls, number = state.tool_calls, turn.number
    newest: list[PastToolCall] = []
    for call_id in reversed(turn.tool_call_ids):  # its own calls in request order, and any loaded from history
        record = calls[call_id]
        if record.turn == number:
            newest.append(PastToolCall(id=call_id, name=record.name, parameters=record.parameters))
            if len(newest) == PAST_TOOL_CALLS_LISTED:
                break
    if not newest:
        return state.past_calls
    return (*newest, *state.past_calls[: PAST_TOOL_CALLS_LISTED - len(newest)])


def close_calls(
    state: AgentState, ids: tuple[str, ...], why: str
) -> Map[str, ToolCallRecord] | Table[str, ToolCallRecord]:
    """Complete every call in ``ids`` with a synthetic failure saying it did not (fully) run and ``why``."""
    calls = state.tool_calls
    at = state.timestamp
    for call_id in ids:
        record = calls[call_id]
        if record.retry_at is not None:
            error = f"{record.last_error} (failed {record.attempt} attempts; not tried again: {why})"
        elif record.status == "running":
            error = f"interrupted: {why} while the tool was running; its outcome is unknown"
        elif record.status == "awaiting-approval":
            error = f"not run: {why} before anyone approved the call"
        elif record.status == "awaiting-input":
            error = f"interrupted: {why} while the tool waited for a person's input; its outcome is unknown"
        else:
            error = f"not run: {why} before the call started"
        closed = replace(
            record,
            status="completed",
            result=ToolFailure(error=error),
            completed_at=at,
            input_requests="",
            retry_at=None,
        )
        calls = calls.set(call_id, closed)
    return calls


def close_streaming(messages: Vector[Message], index: Map[str, int] | Table[str, int], turn: Turn) -> Vector[Message]:
    """``messages`` with the turn's streaming message (if any) marked complete as it stands."""
    if not turn.streaming_message_id:
        return messages
    position = index[turn.streaming_message_id]
    return messages.set(position, replace(messages[position], streaming=False))


def end_turn(state: AgentState, kind: OutcomeKind, reason: str, detail: str = "", *, output: str = "") -> AgentState:
    """Close the open turn with an outcome; dangling calls get failure results, a streaming message ends, a
    summarization under way is given up (the next turn decides again).

    Messages queued under the ``queue`` policy then open the next turn.
    ``state`` already carries the input's timestamp and step.
    """
    turn = state.turn
    assert turn is not None
    dangling = turn.open_call_ids + turn.awaiting_ids
    why = f"the turn was {kind} ({detail or reason})" if dangling else ""
    compaction = state.compaction
    if compaction is not None and compaction.request is not None:  # a summarization under way is given up
        compaction = replace(compaction, request=None)
    state = replace(
        state,
        compaction=compaction,
        tool_calls=close_calls(state, dangling, why) if dangling else state.tool_calls,
        messages=close_streaming(state.messages, state.message_index, turn),
        turn=None,
        past_calls=_past_calls(state, turn),
        last_outcome=TurnOutcome(
            kind=kind,
            reason=reason,
            detail=detail,
            turn=turn.number,
            at=state.timestamp,
            output=output,
            # Kept where a caller reads it: in a child session, and in a turn whose children spent.
            spent=spent_by_turn(turn) if state.config.lineage is not None or turn.children_spent else None,
        ),
    )
    if state.queued:
        entering = tuple(replace(m, seq=state.step) for m in state.queued)
        state = open_turn(replace(state, queued=()), entering)
    return state


def exhaust(state: AgentState, reason: str, detail: str) -> AgentState:
    """A guard tripped (a budget, the deadline, stuck detection): fail the turn, or ask for a final answer.

    Under ``on_budget_exhausted="final-answer"`` the turn stays open for exactly
    one more model call with tools disabled; calls still open are closed first.
    """
    turn = state.turn
    assert turn is not None
    if state.config.on_budget_exhausted != "final-answer" or turn.final_answer:
        return end_turn(state, "failed", reason, detail)
    calls = close_calls(state, turn.open_call_ids + turn.awaiting_ids, f"{detail}, so the agent must answer now")
    final = replace(
        turn,
        open_call_ids=(),
        awaiting_ids=(),
        retry_at=None,
        deadline=None,
        paused_at=None,  # no deadline left to pause: the final answer runs at once
        attempt=0,
        final_answer=True,
        exhausted=reason,
        context_rev=turn.context_rev + 1,
        streaming_message_id="",
    )
    return compacted(
        replace(
            state, tool_calls=calls, turn=final, messages=close_streaming(state.messages, state.message_index, turn)
        )
    )


def final_answer_used_tools(state: AgentState) -> AgentState:
    """The tool-less final answer asked for an internal tool anyway: the turn fails, so no
    further model call is derived beyond the one the budget allowed."""
    turn = state.turn
    assert turn is not None
    return end_turn(state, "failed", turn.exhausted, "the final answer asked for tools again")


def settle(state: AgentState) -> AgentState:
    """Check the model-call budgets at the moment a next model call would be derived, then compact the
    context if the session's policy says so (see ``_compaction``)."""
    turn = state.turn
    if turn is None or turn.open_call_ids or turn.awaiting_ids or turn.retry_at is not None:
        return state
    if turn.final_answer:  # no budget left to check: the final answer is derived, once its context fits
        return compacted(state)
    stopped = stop_if_spent(state, turn)
    return compacted(state) if stopped is state else stopped


def counts_cost(config: AgentConfig) -> bool:
    """Whether the session counts money: a cost budget or a budget pool is set."""
    return config.max_cost is not None or config.max_session_cost is not None or bool(config.budget_pool)


def marks_unpriced(config: AgentConfig) -> bool:
    """Whether a model call the session could not price marks its turn ``unpriced``: when it counts money, and
    in a child session, whose caller reads the mark in what the child spent (its cost stays unknown there)."""
    return counts_cost(config) or config.lineage is not None


NOTHING_SPENT = Spend()


def spent_by_turn(turn: Turn) -> Spend:
    """What ``turn`` spent: its own model calls, tool calls, tokens and cost, its child sessions' included."""
    theirs = turn.children_spent or NOTHING_SPENT
    return Spend(
        model_calls=turn.model_calls + theirs.model_calls,
        tool_calls=turn.tool_call_count + theirs.tool_calls,
        tokens=turn.tokens + theirs.tokens,
        cost=turn.cost + theirs.cost,
        unpriced=turn.unpriced or theirs.unpriced,
    )


def stop_if_spent(state: AgentState, turn: Turn, *, tool_calls: bool = False) -> AgentState:
    """``state``, or its turn ended (or asked for a final answer) when one of its budgets is spent.

    Checked before each model call (:func:`settle`) and whenever a child session reports what it spent
    (``child-spent``, with ``tool_calls``: a child's tool calls can pass the turn's tool-call budget, which
    the turn's own calls are held to when the model asks for them). A call that could not be priced ends the
    turn: the budgets could no longer promise anything. A session budget already spent when a turn opens fails
    it outright (a final answer per turn would overspend it once per turn).
    """
    config = state.config
    theirs = turn.children_spent
    total = turn if theirs is None else spent_by_turn(turn)  # the same counts, without a copy when no child spent
    if config.max_model_calls is not None and total.model_calls >= config.max_model_calls:
        detail = f"the turn used its {config.max_model_calls} model calls"
        return exhaust(state, "max-model-calls", detail + _by_children(theirs, "model_calls"))
    if config.max_tokens is not None and total.tokens >= config.max_tokens:
        detail = f"the turn used {total.tokens} tokens of its budget of {config.max_tokens}"
        return exhaust(state, "max-tokens", detail + _by_children(theirs, "tokens"))
    used = turn.tool_call_count + (theirs.tool_calls if theirs else 0)
    if tool_calls and config.max_tool_calls is not None and used > config.max_tool_calls:
        detail = f"the turn's budget of {config.max_tool_calls} tool calls is spent ({used} used"
        by_children = theirs.tool_calls if theirs else 0
        return exhaust(state, "max-tool-calls", f"{detail}, {by_children} by its child sessions)")
    return settle_cost(state, turn, config)


def settle_cost(state: AgentState, turn: Turn, config: AgentConfig) -> AgentState:
    """The money budgets of :func:`stop_if_spent` (a model call that failed after it was paid is checked
    against these alone)."""
    theirs = turn.children_spent
    if (turn.unpriced or (theirs is not None and theirs.unpriced)) and counts_cost(config):
        if turn.unpriced:
            detail = "a model call could not be priced, so the cost budgets cannot be kept; give the agent a pricing"
        else:
            detail = (
                "a model call of a child session could not be priced, so the cost budgets cannot be kept; "
                "give the child's agent a pricing"
            )
        return end_turn(state, "failed", "unpriced", detail)
    cost = turn.cost + (theirs.cost if theirs else 0)
    if config.max_cost is not None and cost >= config.max_cost:
        spent = f"{format_nanos(cost)} of its budget of {format_nanos(config.max_cost)}"
        mine = f"the turn's model calls cost {spent}"
        return exhaust(state, "max-cost", mine + _by_children(theirs, "cost", format_nanos))
    limit = config.max_session_cost
    everyone = state.children_spent
    session_cost = state.cost + (everyone.cost if everyone else 0)
    if limit is not None and session_cost >= limit:
        spent = f"{format_nanos(session_cost)} of its budget of {format_nanos(limit)}"
        detail = f"the session's model calls cost {spent}" + _by_children(everyone, "cost", format_nanos)
        if not turn.model_calls:
            return end_turn(state, "failed", "max-session-cost", detail)
        return exhaust(state, "max-session-cost", detail)
    return state


def _by_children(theirs: Spend | None, name: str, shown: Callable[[int], str] = str) -> str:
    """The part ``name`` of a spent budget the child sessions spent, for the outcome's detail (nothing when
    no child reported)."""
    return "" if theirs is None else f" ({shown(getattr(theirs, name))} by its child sessions)"


def compacted(state: AgentState) -> AgentState:
    """``state`` with its context compacted (or the turn failed ``context-too-long``) if the session's policy
    says so now that a model call is about to be derived (see ``_compaction``)."""
    turn = state.turn
    if state.config.compaction is None or turn is None:
        return state
    if turn.open_call_ids or turn.awaiting_ids or turn.retry_at is not None:
        return state
    decided = compact_if_due(state)
    if isinstance(decided, TooLong):
        return end_turn(state, "failed", decided.reason, decided.detail)
    return decided
