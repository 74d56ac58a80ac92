"""A model call's cost: checked where it enters, then added to the turn's and the session's spend, which the
cost budgets read (``_turns.settle``). Shared by every input that ends a model call."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from .._encodable import MAX_COUNT
from .._inputs import (
    AnswerRejected,
    ContextCompacted,
    ContextWindowExpanded,
    HandedOff,
    HistoryToolCallsAdded,
    LlmCallFailed,
    ReActObserved,
    Usage,
)
from .._state import AgentState, Turn
from ._common import reject
from ._turns import marks_unpriced

AnsweredInside = HandedOff | ContextWindowExpanded | HistoryToolCallsAdded
"""The inputs that end a model call whose answer is taken inside the session: a handoff, an internal tool."""


def check_cost(
    state: AgentState, inp: ReActObserved | AnswerRejected | ContextCompacted | LlmCallFailed | AnsweredInside
) -> None:
    """A call's cost, when priced, is 0 or more and keeps the session's cost in range."""
    cost = inp.cost
    if cost is None:
        return
    if cost < 0:
        # Accepted, it would lower the session's and the turn's spend below what was paid.
        reject(state, inp, "negative-cost", "cost-not-negative", f"expected a cost of 0 or more nano-units, got {cost}")
    if state.cost + cost > MAX_COUNT:
        reject(
            state,
            inp,
            "cost-overflow",
            "cost-in-range",
            f"cost={cost} would take the session's cost past {MAX_COUNT} nano-units; "
            "expected what one model call cost, in nano-units",
        )


def check_spend(state: AgentState, inp: ReActObserved | AnswerRejected | AnsweredInside) -> None:
    """A finished call's usage (counts of 0 or more, within range, each breakdown within its total) and cost."""
    usage = inp.usage
    if usage.input_tokens < 0 or usage.output_tokens < 0:
        # Accepted, it would lower the session's token counters and the turn's spend.
        reject(
            state,
            inp,
            "negative-usage",
            "usage-not-negative",
            f"expected token counts of 0 or more, got input_tokens={usage.input_tokens}, "
            f"output_tokens={usage.output_tokens}",
        )
    if state.input_tokens + usage.input_tokens > MAX_COUNT or state.output_tokens + usage.output_tokens > MAX_COUNT:
        # Accepted, the session's counters would pass what a 64-bit reader (and the state's hash) can hold.
        reject(
            state,
            inp,
            "usage-overflow",
            "token-counts-in-range",
            f"input_tokens={usage.input_tokens}, output_tokens={usage.output_tokens} would take the session's "
            f"token counts past {MAX_COUNT}; expected the tokens one model call consumed",
        )
    check_cost(state, inp)
    if (usage.cache_read_tokens or usage.cache_write_tokens or usage.reasoning_tokens) and not _parts_fit(usage):
        reject(
            state,
            inp,
            "usage-parts",
            "usage-parts-within-totals",
            "expected cache_read_tokens and cache_write_tokens (0 or more) to add up to at most input_tokens and "
            f"reasoning_tokens (0 or more) to be at most output_tokens, got {usage}",
        )


def turn_spend(state: AgentState, turn: Turn, cost: int | None) -> tuple[int, bool]:
    """The turn's cost with the call's ``cost`` added, and whether a call of the turn could not be priced while
    the session counts money (a cost budget or a pool is set) or is a child session (see :func:`marks_unpriced`)."""
    return turn.cost + (cost or 0), turn.unpriced or (cost is None and marks_unpriced(state.config))


def session_spend(state: AgentState, cost: int | None) -> int:
    """The session's cost with the call's ``cost`` added."""
    return state.cost + (cost or 0)


def turn_counted(
    state: AgentState,
    turn: Turn,
    inp: ReActObserved | AnswerRejected | AnsweredInside,
    *,
    priced: bool = True,
    **changes: Any,
) -> Turn:
    """The turn with the model call counted (its tokens and cost, a new context revision, attempts reset), and
    ``changes``; with ``priced=False`` the call is not one to price, so it leaves ``unpriced`` as it was."""
    usage = inp.usage
    cost, unpriced = turn_spend(state, turn, inp.cost)
    return replace(
        turn,
        model_calls=turn.model_calls + 1,
        tokens=turn.tokens + usage.input_tokens + usage.output_tokens,
        attempt=0,
        context_rev=turn.context_rev + 1,
        cost=cost,
        unpriced=unpriced if priced else turn.unpriced,
        **changes,
    )


def counted_inside(state: AgentState, turn: Turn, inp: AnsweredInside) -> tuple[AgentState, Turn]:
    """The state and the turn with a model call answered inside the session counted, once its usage and cost
    are checked: the turn as :func:`turn_counted` makes it, the session's tokens and cost.

    A call that reported neither tokens nor a cost (as every such input logged before they carried them) leaves
    the turn's ``unpriced`` as it was: it cost nothing that could be priced.
    """
    check_spend(state, inp)
    usage = inp.usage
    reported = inp.cost is not None or bool(usage.input_tokens or usage.output_tokens)
    turn = turn_counted(state, turn, inp, priced=reported)
    state = replace(
        state,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
        cost=session_spend(state, inp.cost),
    )
    return state, turn


def _parts_fit(usage: Usage) -> bool:
    """Whether the breakdowns are counts within their totals (each is a part of its total)."""
    read, written, reasoning = usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens
    return (
        min(read, written, reasoning) >= 0 and read + written <= usage.input_tokens and reasoning <= usage.output_tokens
    )
