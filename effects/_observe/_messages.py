"""Reading a state's conversation in order, whatever collection the state keeps messages in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_core import AgentState, Message


def messages_in_order(state: AgentState) -> Iterator[Message]:
    """The session's messages, oldest first.

    With :func:`messages_newest_first`, the one place that knows how the state
    holds them (a mapping keyed by position, or a sequence), so readers of
    conversations need not.
    """
    messages: Any = state.messages
    if hasattr(messages, "keys"):  # keyed by position
        for position in range(len(messages)):
            yield messages[position]
        return
    yield from messages


def messages_newest_first(state: AgentState) -> Iterator[Message]:
    """The session's messages, newest first (cheap to stop early on a long session)."""
    messages: Any = state.messages
    for position in range(len(messages) - 1, -1, -1):
        yield messages[position]
