"""What a failed summarization, or a provider refusing a context as too long, does to the turn (see
``_compaction``'s theory of operation)."""

from __future__ import annotations

from msgspec.structs import replace

from .._compaction._policy import PROVIDER
from .._compaction._tokens import context_tokens
from .._context import llm_context
from .._inputs import LlmCallFailed
from .._state import AgentState, Turn
from ._compaction import CONTEXT_TOO_LONG, Compacted, TooLong, compact, fits_or_fail
from ._turns import close_streaming, end_turn


def ended(compacted: Compacted, state: AgentState) -> AgentState:
    """The state a compaction decision leads to: ``compacted`` itself, or ``state``'s turn failed ``context-too-long``."""
    if isinstance(compacted, TooLong):
        return end_turn(state, "failed", compacted.reason, compacted.detail)
    return compacted


def compaction_failed(state: AgentState, inp: LlmCallFailed, turn: Turn, delay: int | None) -> AgentState:
    """A summarization failed: ``delay`` is the backoff before the next attempt, ``None`` when none is left;
    then it is given up for the turn, which goes on if its context fits and fails ``context-too-long`` if not.
    ``state`` already carries the input's timestamp and step."""
    compaction, policy = state.compaction, state.config.compaction
    assert compaction is not None and compaction.request is not None and policy is not None
    request = compaction.request
    if delay is not None:
        retry = replace(request, attempt=request.attempt + 1)
        return replace(
            state,
            compaction=replace(compaction, request=retry),
            turn=replace(turn, retry_at=inp.timestamp + delay),
        )
    state = replace(state, compaction=replace(compaction, request=None, gave_up_turn=turn.number))
    tokens = context_tokens(llm_context(state))
    why = f"summarization failed after {request.attempt + 1} attempts: {inp.error}"
    return ended(fits_or_fail(state, policy, tokens, why), state)


def context_refused(state: AgentState, inp: LlmCallFailed, turn: Turn) -> AgentState:
    """The provider refused the answer's request as too long: compact once in the turn, then fail.
    ``state`` already carries the input's timestamp and step."""
    policy, compaction = state.config.compaction, state.compaction
    context = llm_context(state)
    tokens = context_tokens(context)
    detail = f"the provider refused the context as too long (about {tokens} tokens by estimate): {inp.error}"
    if policy is None or compaction is None or compaction.forced_turn == turn.number or policy.strategy == PROVIDER:
        return end_turn(state, "failed", CONTEXT_TOO_LONG, detail)
    messages = close_streaming(state.messages, state.message_index, turn)
    turn = replace(turn, context_rev=turn.context_rev + 1, streaming_message_id="", attempt=0)
    state = replace(state, messages=messages, turn=turn, compaction=replace(compaction, forced_turn=turn.number))
    compaction = state.compaction
    assert compaction is not None
    compacted = compact(state, policy, compaction, turn, llm_context(state), tokens, detail)
    if isinstance(compacted, TooLong):
        return end_turn(state, "failed", compacted.reason, compacted.detail)
    if compacted.compaction == compaction:
        return end_turn(state, "failed", CONTEXT_TOO_LONG, f"{detail}; nothing is left to compact")
    return compacted
