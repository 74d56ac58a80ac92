"""``llm-call-failed``: retry with deterministic exponential backoff, or fail the turn."""

from __future__ import annotations

from msgspec.structs import replace

from .._encodable import MAX_DURATION_MS
from .._inputs import LlmCallFailed
from .._state import AgentState
from ._backoff import backoff_ms
from ._common import reject, require_thinking
from ._turns import close_streaming, end_turn


def on_llm_call_failed(state: AgentState, inp: LlmCallFailed) -> AgentState:
    """A retryable failure with attempts left schedules a retry through a ``wait-until`` timer:
    ``retry_base_ms * 2**(failures-1)`` capped at ``retry_max_ms``, or the server's
    ``retry_after_ms`` when that is longer. Otherwise the turn fails with ``llm-error``."""
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
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1)
    if not inp.retryable or failures >= config.llm_max_attempts:
        why = "not retryable" if not inp.retryable else f"failed {failures} of {config.llm_max_attempts} attempts"
        return end_turn(state, "failed", "llm-error", f"model call {why}: {inp.error}")
    delay = backoff_ms(config.retry_base_ms, config.retry_max_ms, failures)
    if inp.retry_after_ms is not None:
        delay = max(delay, inp.retry_after_ms)
    # A call that was streaming is gone; the retry starts a fresh message.
    messages = close_streaming(state.messages, state.message_index, turn)
    turn = replace(turn, attempt=failures, retry_at=inp.timestamp + delay, streaming_message_id="")
    return replace(state, turn=turn, messages=messages)
