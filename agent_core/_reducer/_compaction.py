"""Context compaction in the reducer: when the policy fires, what it covers or clears, and what a failure does.

Theory of operation. :func:`compact_if_due` runs where a model call is about
to be derived (``settle``). If the last call's reported input tokens, or the
estimate of the next request, reach the policy's trigger (or the context holds
more entries than ``max_messages``), the strategy acts:

* ``summarize`` records a :class:`SummaryRequest` covering the context's
  oldest part (all but the newest ``keep_recent_percent`` of the window); while
  it stands, ``effects_at`` derives the summarization call instead of the answer,
  and its result enters as ``context-compacted``;
* ``clear-tool-results`` (or a registered strategy) records which of the
  turn's tool results the context shows as a placeholder;
* ``provider`` leaves it to the provider (the threshold rides on the request).

When nothing is left to compact and the estimate is still over the declared
window, the turn fails with reason ``context-too-long`` and the numbers. A
summarization that fails is retried like a model call, then given up for the
turn: the turn goes on uncompacted if the context fits, else fails. A
provider's context-length error compacts once per turn before failing.
"""

from __future__ import annotations

from typing import NamedTuple

from msgspec.structs import replace

from .._compaction._policy import CLEAR_TOOL_RESULTS, PROVIDER, SUMMARIZE, CompactionPolicy, registered_strategy
from .._compaction._state import ContextCompaction, SummaryRequest
from .._compaction._tokens import context_tokens, text_tokens
from .._context import LlmContext, llm_context
from .._inputs import ToolSuccess
from .._rules import Raised, raised_by
from .._state import AgentState, Turn

CONTEXT_TOO_LONG = "context-too-long"
"""The reason of a turn that failed because its context no longer fits the declared window."""


class TooLong(NamedTuple):
    """The turn must fail: its context does not fit the declared window and nothing is left to compact
    (``reason`` :data:`CONTEXT_TOO_LONG`), or the policy's registered strategy raised
    (``compaction:<name>-raised``)."""

    detail: str
    reason: str = CONTEXT_TOO_LONG


Compacted = AgentState | TooLong
"""What a compaction decision gives: the state (compaction applied or asked for, or nothing to do), or
:class:`TooLong`."""


def compact_if_due(state: AgentState) -> Compacted:
    """``state`` with compaction applied or asked for when the policy's trigger is reached (see the module)."""
    policy, compaction, turn = state.config.compaction, state.compaction, state.turn
    if policy is None or compaction is None or turn is None or compaction.request is not None:
        return state
    context = llm_context(state)
    tokens = context_tokens(context)
    over_count = policy.max_messages is not None and len(context.entries) > policy.max_messages
    if max(compaction.last_input_tokens, tokens) < policy.trigger_tokens and not over_count:
        return state
    return compact(state, policy, compaction, turn, context, tokens, "")


def compact(
    state: AgentState,
    policy: CompactionPolicy,
    compaction: ContextCompaction,
    turn: Turn,
    context: LlmContext,
    tokens: int,
    why: str,
) -> Compacted:
    """Apply the policy's strategy (``why``: what forced it, or empty when the trigger fired). A forced
    compaction keeps only the newest entry verbatim."""
    strategy = policy.strategy
    keep = 0 if why else policy.keep_tokens
    if strategy == PROVIDER:
        return fits_or_fail(state, policy, tokens, why or "the provider compacts on its side")
    if strategy == SUMMARIZE:
        if compaction.gave_up_turn == turn.number:
            return fits_or_fail(state, policy, tokens, why or "summarization failed earlier in the turn")
        request = _cover(state, keep, compaction, turn, context)
        if request is None:
            return fits_or_fail(state, policy, tokens, why or "nothing older is left to summarize")
        return replace(state, compaction=replace(compaction, request=request))
    cleared = _cleared(state, policy, keep, turn)
    if isinstance(cleared, Raised):
        return TooLong(f"compaction strategy {policy.strategy!r} raised {cleared.error}", cleared.reason)
    if cleared == compaction.cleared:
        return fits_or_fail(state, policy, tokens, why or "no tool result is left to clear")
    state = replace(state, compaction=replace(compaction, cleared=cleared, last_input_tokens=0))
    return fits_or_fail(state, policy, context_tokens(llm_context(state)), why or "after clearing tool results")


def fits_or_fail(state: AgentState, policy: CompactionPolicy, tokens: int, why: str) -> Compacted:
    """``state`` when a context of ``tokens`` fits the declared window, else :class:`TooLong` with the numbers."""
    window = policy.context_window_tokens
    if tokens <= window:
        return state
    return TooLong(f"the context holds about {tokens} tokens, more than the declared window of {window} ({why})")


# --- what a summary covers ------------------------------------------------------


def _cover(
    state: AgentState, keep: int, compaction: ContextCompaction, turn: Turn, context: LlmContext
) -> SummaryRequest | None:
    """The oldest part of the context, up to what the newest ``keep`` tokens need (at least the newest entry is
    kept): messages up to a position and the turn's batches before it. ``None`` when it covers nothing new."""
    items = _timeline(state, compaction, turn, context)
    if len(items) < 2:
        return None
    kept, budget = 1, keep - items[-1][2]
    while kept < len(items) and items[-kept - 1][2] <= budget:
        budget -= items[-kept - 1][2]
        kept += 1
    covered = items[: len(items) - kept]
    if not covered:
        return None
    end = compaction.summarized_messages
    ids: list[str] = []
    for _, _, _, position, call_ids in covered:
        if position >= 0:
            end = position + 1
        ids.extend(call_ids)
    return SummaryRequest(messages=end, tool_call_ids=tuple(ids))


_Item = tuple[int, int, int, int, tuple[str, ...]]
"""One entry of the context's timeline: (seq, 0 for a message or 1 for a batch, tokens, message position or -1,
the batch's call ids)."""


def _timeline(state: AgentState, compaction: ContextCompaction, turn: Turn, context: LlmContext) -> list[_Item]:
    """The messages after the summary and the turn's batches, in ``llm_context``'s order."""
    items: list[_Item] = []
    messages = state.messages
    for position in range(compaction.summarized_messages, len(messages)):
        message = messages[position]
        if message.streaming or (message.role == "assistant" and not message.content):
            continue
        items.append((message.seq, 0, text_tokens(message.content), position, ()))
    batches: dict[int, list[str]] = {}
    tokens: dict[int, int] = {}
    cleared = frozenset(context.cleared_tool_calls)
    calls = state.tool_calls
    for call_id in turn.tool_call_ids:
        record = calls[call_id]
        batches.setdefault(record.seq, []).append(call_id)
        size = len(record.parameters) + (200 if call_id in cleared else _result_chars(record.result))
        tokens[record.seq] = tokens.get(record.seq, 0) + -(-size // 4)
    for seq, call_ids in batches.items():
        items.append((seq, 1, tokens[seq], -1, tuple(call_ids)))
    items.sort(key=lambda item: (item[0], item[1]))
    return items


def _result_chars(result: object) -> int:
    if isinstance(result, ToolSuccess):
        return len(result.content)
    error = getattr(result, "error", "")
    return len(error) if isinstance(error, str) else 0


# --- which tool results are cleared ---------------------------------------------


def _cleared(state: AgentState, policy: CompactionPolicy, keep_tokens: int, turn: Turn) -> tuple[str, ...] | Raised:
    """The calls whose results the context shows as a placeholder: a registered strategy's choice, or (built in)
    the oldest results of the turn until the newest ``keep_tokens`` fit, the newest always kept."""
    in_turn = turn.tool_call_ids
    compaction = state.compaction
    already = frozenset(compaction.cleared if compaction is not None else ())
    restored = frozenset(compaction.restored if compaction is not None else ())
    if policy.strategy != CLEAR_TOOL_RESULTS:
        strategy = registered_strategy(policy.strategy)
        assert strategy is not None  # session-started refuses an unregistered one
        try:
            chosen = frozenset(strategy(state, policy))
            if not all(isinstance(call_id, str) for call_id in chosen):
                raise TypeError("returned something other than tool call ids (str)")
        except Exception as error:  # a user's strategy: any error becomes the turn's visible outcome
            return raised_by("compaction", policy.strategy, error)
        chosen = (chosen | already) - restored
        return tuple(call_id for call_id in in_turn if call_id in chosen)
    calls = state.tool_calls
    budget = keep_tokens
    keep: set[str] = set()
    for position, call_id in enumerate(reversed(in_turn)):
        size = -(-_result_chars(calls[call_id].result) // 4)
        if call_id in restored:  # the model loaded it back
            keep.add(call_id)
            continue
        if call_id in already:
            continue
        if position == 0 or size <= budget:
            budget -= size
            keep.add(call_id)
        else:
            budget = -1  # an older result never outlives a newer one cleared
    return tuple(call_id for call_id in in_turn if call_id not in keep)
