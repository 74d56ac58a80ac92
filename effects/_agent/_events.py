"""Events the agent runtime publishes to subscribers besides the machine's timeline."""

from __future__ import annotations

from typing import ClassVar

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
