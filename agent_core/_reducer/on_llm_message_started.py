"""``llm-message-started``: the model began a user-visible message."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import LlmMessageStarted
from .._state import AgentState, Message
from ._common import reject, require_new_message_id, require_not_summarizing, require_thinking
from ._turns import append_message


def on_llm_message_started(state: AgentState, inp: LlmMessageStarted) -> AgentState:
    """Append an empty streaming assistant message. The window grows by one so the turn's own
    messages never push older context out; the ``call-llm`` key does not change."""
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    if turn.streaming_message_id:
        reject(
            state,
            inp,
            "already-streaming",
            "one-streaming-message",
            f"message {turn.streaming_message_id!r} is still streaming; expected llm-message-completed for it first",
        )
    require_new_message_id(state, inp, inp.message_id)
    step = state.step + 1
    message = Message(id=inp.message_id, role="assistant", content="", streaming=True, seq=step, at=inp.timestamp)
    messages, index = append_message(state, message)
    return replace(
        state,
        timestamp=inp.timestamp,
        step=step,
        messages=messages,
        message_index=index,
        turn=replace(turn, context_window_size=turn.context_window_size + 1, streaming_message_id=inp.message_id),
    )
