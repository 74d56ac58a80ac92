"""What an AG-UI run request asks of a session: new user messages, and answers to the interrupts it resumes.

``RunAgentInput.messages`` is the client's whole conversation: a user message
whose id the session has not seen becomes ``user-message-received`` with that
id (so sending the same conversation again adds nothing). Each ``resume``
entry answers an interrupt by the tool call's id: for an approval, the
payload ``{"approved": true}`` or ``{"approved": false, "reason": "..."}``
(``status: "cancelled"`` denies it); for a tool's questions, the answers by
key (``cancelled`` answers each with ``{"action": "cancel"}``). Anything else
is refused with a message saying what was expected, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput, TextPart, UserMessage

from agent_core import (
    AgentInput,
    AgentState,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallInputProvided,
    UserMessageReceived,
    replace_surrogates,
)

from .._sessions import Refused

MAX_MESSAGE_CHARS = 1_000_000
"""The longest user message a request may carry (as :meth:`effects.Session.send`)."""

DISMISSED = "the person dismissed the request"
"""The reason of a denial sent as a cancelled resume entry."""


def new_messages(run: RunAgentInput, state: AgentState) -> list[tuple[str, str]]:
    """The user messages of ``run`` the session has not seen: ``(id, text)``, in order."""
    seen = set(state.message_index.keys()) | {m.id for m in state.queued}
    found = []
    for message in run.messages:
        if not isinstance(message, UserMessage) or message.id in seen:
            continue
        text = _text(message)
        if len(text) > MAX_MESSAGE_CHARS:
            raise Refused(
                f"user message {message.id!r} has {len(text):,} characters; expected at most {MAX_MESSAGE_CHARS:,}",
                code="message-too-long",
                status=400,
            )
        found.append((message.id, replace_surrogates(text)))
        seen.add(message.id)
    return found


def _text(message: UserMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if not isinstance(part, TextPart):
            raise Refused(
                f"user message {message.id!r} has a {part.type} part; expected text (this agent reads text only)",
                code="unsupported-content",
                status=400,
            )
        parts.append(part.text)
    return "\n".join(parts)


def requested_inputs(run: RunAgentInput, state: AgentState, now: int) -> list[AgentInput]:
    """The inputs ``run`` asks for: its answers to interrupts first, then its new user messages."""
    inputs: list[AgentInput] = [answer(entry, state, now) for entry in run.resume or ()]
    inputs += [UserMessageReceived(timestamp=now, message_id=i, content=text) for i, text in new_messages(run, state)]
    return inputs


def answer(entry: ResumeEntry, state: AgentState, now: int) -> AgentInput:
    """The input a resume entry stands for (see the module docstring)."""
    call_id = entry.interrupt_id
    record = state.tool_calls.get(call_id)
    if record is None or record.status not in ("awaiting-approval", "awaiting-input"):
        raise Refused(
            f"no pending interrupt {call_id!r}; expected one of: {', '.join(pending(state)) or 'none (nothing waits)'}",
            code="unknown-interrupt",
            status=409,
        )
    payload = entry.payload
    if record.status == "awaiting-input":
        if entry.status == "cancelled":
            questions = json.loads(record.input_requests)
            responses: Any = {key: {"action": "cancel"} for key in questions}
        elif isinstance(payload, dict) and payload:
            responses = payload
        else:
            raise Refused(
                f"interrupt {call_id!r} asks questions; expected a payload answering them by key, such as "
                f'{{"<key>": {{"action": "accept", "content": {{...}}}}}}, got {json.dumps(payload)[:80]}',
                code="bad-payload",
                status=400,
            )
        text = json.dumps(responses, ensure_ascii=False, separators=(",", ":"))
        return ToolCallInputProvided(timestamp=now, tool_call_id=call_id, responses=replace_surrogates(text))
    if entry.status == "cancelled":
        return ToolCallDenied(timestamp=now, tool_call_id=call_id, reason=DISMISSED)
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        raise Refused(
            f'interrupt {call_id!r} asks for an approval; expected a payload {{"approved": true}} or '
            f'{{"approved": false, "reason": "..."}}, got {json.dumps(payload)[:80]}',
            code="bad-payload",
            status=400,
        )
    if payload["approved"]:
        return ToolCallApproved(timestamp=now, tool_call_id=call_id)
    reason = payload.get("reason", "")
    return ToolCallDenied(timestamp=now, tool_call_id=call_id, reason=replace_surrogates(str(reason)))


def pending(state: AgentState) -> Sequence[str]:
    """The ids of the interrupts (tool calls waiting for a person) the session has now."""
    return state.turn.awaiting_ids if state.turn is not None else ()
