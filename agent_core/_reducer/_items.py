"""A model observation's provider items: what the reducer checks before it keeps them, and where it keeps them.

The items of a ``continue-re-act`` stay with its batch of tool calls (on the
batch's first record); those of a ``complete-re-act`` go on the assistant
message their ``text`` markers name. Both are where ``llm_context`` puts them
back. Only a reply's own parts may be named: a ``tool-call`` marker names a
call of the batch, a ``text`` marker the assistant message the call answered
with, and the text markers cover that message's text exactly.
"""

from __future__ import annotations

from typing import NoReturn

from .._inputs import (
    MAX_ITEM_CHARS,
    MAX_REPLY_ITEM_CHARS,
    MAX_REPLY_ITEMS,
    TEXT_MARKER,
    TOOL_CALL_MARKER,
    ContinueReAct,
    ReActObserved,
)
from .._state import AgentState, Message
from ._common import reject


def check_items(state: AgentState, inp: ReActObserved) -> Message | None:
    """Refuse items the state cannot keep; the assistant message a ``complete-re-act``'s items go on, if any."""
    items = inp.items
    if not items:
        return None
    _check_bounds(state, inp)
    calls = inp.observation.tool_calls if isinstance(inp.observation, ContinueReAct) else None
    named: set[str] = set()
    message_id = ""
    text_chars = 0
    for position, item in enumerate(items):
        where = f"items[{position}]"
        if not item.kind or not item.provider:
            _refuse(state, inp, f"{where} has an empty kind or provider; expected both (e.g. 'thinking', 'anthropic')")
        if item.chars < 0:
            _refuse(state, inp, f"{where} counts {item.chars} characters; expected 0 or more")
        if item.kind == TOOL_CALL_MARKER:
            if calls is None or item.ref not in calls or item.ref in named:
                expected = "a call of this batch, named once" if calls is not None else "no tool-call marker"
                _refuse(state, inp, f"{where} marks tool call {item.ref!r}; expected {expected}")
            named.add(item.ref)
        elif item.kind == TEXT_MARKER:
            if message_id and item.ref != message_id:
                _refuse(state, inp, f"{where} names message {item.ref!r}; the reply's text is in {message_id!r}")
            message_id = item.ref
            text_chars += item.chars
    if not message_id:
        if calls is None:
            _refuse(state, inp, "a complete-re-act's items need a text marker naming the message they belong with")
        return None
    message = _answered(state, inp, message_id)
    if text_chars != len(message.content):
        _refuse(
            state,
            inp,
            f"the text markers cover {text_chars} characters; message {message_id!r} has {len(message.content)}",
        )
    if calls is None and message.items:
        _refuse(state, inp, f"message {message_id!r} already carries the items of an earlier model call")
    return message if calls is None else None


def _check_bounds(state: AgentState, inp: ReActObserved) -> None:
    items = inp.items
    if len(items) > MAX_REPLY_ITEMS:
        _refuse(state, inp, f"the reply carries {len(items)} items; at most {MAX_REPLY_ITEMS} are kept")
    total = 0
    for position, item in enumerate(items):
        size = len(item.data)
        if size > MAX_ITEM_CHARS:
            _refuse(state, inp, f"items[{position}] holds {size} characters; at most {MAX_ITEM_CHARS} are kept")
        total += size
    if total > MAX_REPLY_ITEM_CHARS:
        _refuse(state, inp, f"the reply's items hold {total} characters; at most {MAX_REPLY_ITEM_CHARS} are kept")


def _answered(state: AgentState, inp: ReActObserved, message_id: str) -> Message:
    position = state.message_index.get(message_id)
    message = state.messages[position] if position is not None else None
    if message is None or message.role != "assistant" or message.streaming:
        _refuse(state, inp, f"the text markers name {message_id!r}; expected a completed assistant message")
    return message


def _refuse(state: AgentState, inp: ReActObserved, message: str) -> NoReturn:
    reject(state, inp, "bad-items", "items-fit-the-reply", message)
