"""``user-message-received``: opens a turn, or joins the open one per ``user_message_policy``."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import UserMessageReceived
from .._state import AgentState, Message
from ._common import require_new_message_id
from ._turns import append_message, close_streaming, compacted, end_turn, open_turn


def on_user_message_received(state: AgentState, inp: UserMessageReceived) -> AgentState:
    """Between turns: open one. During a turn: ``merge`` widens the open turn's window by one (a
    running model call restarts with the new context), ``queue`` keeps the message for the next
    turn, ``interrupt`` cancels the turn and opens a new one with the message."""
    require_new_message_id(state, inp, inp.message_id)
    step = state.step + 1
    message = Message(id=inp.message_id, role="user", content=inp.content, seq=step, at=inp.timestamp)
    state = replace(state, timestamp=inp.timestamp, step=step)
    turn = state.turn
    if turn is None:
        return open_turn(state, (message,))
    policy = state.config.user_message_policy
    if policy == "queue":
        return replace(state, queued=(*state.queued, message))
    if policy == "interrupt":
        # Nothing is ever queued under this policy, so ending the turn leaves the session idle.
        state = end_turn(state, "cancelled", "interrupted", "interrupted by a new user message")
        return open_turn(state, (message,))
    return _merge(state, message)


def _merge(state: AgentState, message: Message) -> AgentState:
    turn = state.turn
    assert turn is not None
    messages, index = append_message(state, message)
    # The model call that was streaming is superseded by a call that sees the new message.
    messages = close_streaming(messages, index, turn)
    turn = replace(
        turn,
        context_window_size=turn.context_window_size + 1,
        context_rev=turn.context_rev + 1,
        streaming_message_id="",
    )
    return compacted(replace(state, messages=messages, message_index=index, turn=turn))
