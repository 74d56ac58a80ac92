"""``llm-call-failed``: retry with deterministic exponential backoff, or fail the turn."""

from __future__ import annotations

from msgspec.structs import replace

from .._encodable import MAX_DURATION_MS
from .._inputs import LlmCallFailed
from .._state import AgentState, Turn
from ._backoff import backoff_ms
from ._common import reject, require_thinking
from ._spend import check_cost, session_spend, turn_spend
from ._too_long import compaction_failed, context_refused
from ._turns import close_streaming, end_turn, settle_cost


def on_llm_call_failed(state: AgentState, inp: LlmCallFailed) -> AgentState:
    """A retryable failure with attempts left schedules a retry through a ``wait-until`` timer:
    ``retry_base_ms * 2**(failures-1)`` capped at ``retry_max_ms``, or the server's
    ``retry_after_ms`` when that is longer. Otherwise the turn fails with ``llm-error``. A ``cost`` (a call
    that answered, paid for, whose answer was refused) is added to the turn's and the session's spend."""
    turn = require_thinking(state, inp)
    wait = inp.retry_after_ms
    if wait is not None and not 0 <= wait <= MAX_DURATION_MS:
        reject(
            state,
            inp,
            "retry-after-range",
            "retry-after-is-a-duration",
            f"expected retry_after_ms from 0 to {MAX_DURATION_MS} or None, got {wait}",
        )
    config = state.config
    failures = turn.attempt + 1
    if inp.cost is None:
        state = replace(state, timestamp=inp.timestamp, step=state.step + 1)
    else:  # the call answered and was paid for: its cost counts like any model call's
        check_cost(state, inp)
        cost, unpriced = turn_spend(state, turn, inp.cost)
        turn = replace(turn, cost=cost, unpriced=unpriced)
        spent = session_spend(state, inp.cost)
        state = replace(state, timestamp=inp.timestamp, step=state.step + 1, turn=turn, cost=spent)
        over = None if turn.final_answer else _over_budget(state, turn)
        if over is not None:  # no retry once the cost budgets are spent, as before any model call
            return over
    compaction = state.compaction
    if compaction is not None and compaction.request is not None:
        summary_failures = compaction.request.attempt + 1
        retry = inp.retryable and summary_failures < config.llm_max_attempts
        return compaction_failed(state, inp, turn, retry_delay(state, inp, summary_failures) if retry else None)
    if inp.context_too_long:
        return context_refused(state, inp, turn)
    if not inp.retryable or failures >= config.llm_max_attempts:
        why = "not retryable" if not inp.retryable else f"failed {failures} of {config.llm_max_attempts} attempts"
        return end_turn(state, "failed", "llm-error", f"model call {why}: {inp.error}")
    delay = retry_delay(state, inp, failures)
    # A call that was streaming is gone; the retry starts a fresh message.
    messages = close_streaming(state.messages, state.message_index, turn)
    turn = replace(turn, attempt=failures, retry_at=inp.timestamp + delay, streaming_message_id="")
    return replace(state, turn=turn, messages=messages)


def _over_budget(state: AgentState, turn: Turn) -> AgentState | None:
    """The turn ended (or asked for its final answer) if the paid failure spent a cost budget, giving up a
    summarization under way; ``None`` while the budgets hold."""
    compaction = state.compaction
    if compaction is not None and compaction.request is not None:
        quiet = replace(state, compaction=replace(compaction, request=None))
        costed = settle_cost(quiet, turn, state.config)
        return None if costed is quiet else costed
    costed = settle_cost(state, turn, state.config)
    return None if costed is state else costed


def retry_delay(state: AgentState, inp: LlmCallFailed, failures: int) -> int:
    """The backoff after the ``failures``-th failure of a call, in ms."""
    config = state.config
    delay = backoff_ms(config.retry_base_ms, config.retry_max_ms, failures)
    if inp.retry_after_ms is not None:
        delay = max(delay, inp.retry_after_ms)
    return delay
