"""Events the agent runtime publishes to subscribers besides the machine's timeline."""

from __future__ import annotations

from typing import ClassVar

from agent_core import AgentState

from .._machine import MachineEvent


class TextDelta(MachineEvent, frozen=True, kw_only=True):
    """A chunk of text the model is streaming into message ``message_id``.

    Only for display: it never enters the log. The whole text enters it with
    ``llm-message-completed``. Deltas are published at once, while inputs are
    applied on the loop's next turn, so the first delta of a message may reach
    subscribers before the ``llm-message-started`` that opens it.
    """

    type: ClassVar[str] = "text-delta"
    message_id: str
    text: str


class ChildEvent(MachineEvent, frozen=True, kw_only=True):
    """``event`` happened in a child session (an agent called as a tool), reaching its caller's subscribers.

    ``path`` holds the session ids from the subscribed session's child down to
    the session ``event`` is from (``path[-1]``): ``("plan:ask-cats",)`` for a
    child, ``("plan:ask-cats", "plan:ask-cats:deep-1")`` for a grandchild. The
    subscribed session's own events are not wrapped (their path is empty), so a
    subscriber that only knows them sees nothing new but events of this type.
    The first event of each child session is a :class:`SessionOpened`, its last
    a :class:`SessionClosed`.
    """

    type: ClassVar[str] = "child-event"
    path: tuple[str, ...]
    event: MachineEvent


class SessionOpened(MachineEvent, frozen=True, kw_only=True):
    """A child session opened (see :class:`ChildEvent`); ``state`` is its state then: the initial state of a
    new child (its ``session-started`` follows), the state folded from its log for a resumed one."""

    type: ClassVar[str] = "session-opened"
    state: AgentState


class SessionClosed(MachineEvent, frozen=True, kw_only=True):
    """A child session closed (see :class:`ChildEvent`): its call ended, was cancelled, or its process stops.
    ``state`` is its last state."""

    type: ClassVar[str] = "session-closed"
    state: AgentState
