"""``llm-message-completed``: the streaming message is complete."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import LlmMessageCompleted
from .._state import AgentState
from ._common import reject, require_turn


def on_llm_message_completed(state: AgentState, inp: LlmMessageCompleted) -> AgentState:
    """Fill the streaming message with its whole content."""
    turn = require_turn(state, inp)
    if not inp.message_id or inp.message_id != turn.streaming_message_id:
        streaming = turn.streaming_message_id
        expected = f"the streaming message {streaming!r}" if streaming else "no completion (no message is streaming)"
        reject(
            state,
            inp,
            "not-streaming",
            "message-is-streaming",
            f"expected {expected}, got a completion of {inp.message_id!r}",
        )
    position = state.message_index[inp.message_id]
    message = state.messages[position]
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        messages=state.messages.set(position, replace(message, content=inp.content, streaming=False)),
        turn=replace(turn, streaming_message_id=""),
    )
