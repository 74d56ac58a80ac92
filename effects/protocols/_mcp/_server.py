"""An agent's sessions as MCP tools (the official SDK's ``MCPServer``), so an IDE or another agent can use it.

The tools: ``start_session`` (with a first message), ``send_message``,
``read_answer``, ``approve`` (or deny) a tool call, ``answer_questions`` a
tool asked, and ``cancel_turn``. Each that starts work waits for the turn to
end or to wait for a person (at most ``wait_seconds``) and returns the
session's status: its latest answer, how the turn ended, and what waits for a
decision. Everything goes through the session's log, so an MCP client sees
the same session as the viewer, the AG-UI stream and ``agent-core show``.
Bad arguments (an unknown session, a decision on a call that is not pending)
are tool errors saying what was expected; nothing is written for them.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agent_core import (
    AgentInput,
    AgentState,
    ReActCancelled,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallInputProvided,
    UserMessageReceived,
    phase,
    replace_surrogates,
)
from effects import session_exists

from .._host import SessionHost
from .._sessions import Refused

MAX_WAIT_SECONDS = 600.0
"""The longest a tool call waits for a turn (a client may ask for less)."""

MAX_MESSAGE_CHARS = 1_000_000


def status(session_id: str, state: AgentState) -> dict[str, Any]:
    """What a client reads about a session: its status, latest answer, and what waits for a person."""
    turn, outcome = state.turn, state.last_outcome
    pending = []
    for call_id in turn.awaiting_ids if turn is not None else ():
        record = state.tool_calls[call_id]
        item: dict[str, Any] = {"tool_call_id": call_id, "tool": record.name, "arguments": _json(record.parameters)}
        if record.status == "awaiting-input":
            item["kind"], item["questions"] = "questions", _json(record.input_requests)
        else:
            item["kind"] = "approval"
        pending.append(item)
    if turn is not None:
        current = "waiting" if pending and phase(state).value == "awaiting-approval" else "working"
    else:
        current = outcome.kind if outcome is not None else "idle"
    return {
        "session_id": session_id,
        "status": current,
        "answer": latest_answer(state),
        "reason": (outcome.detail or outcome.reason) if turn is None and outcome is not None else "",
        "pending": pending,
        "records": state.step,
    }


def latest_answer(state: AgentState) -> str:
    """The assistant's messages since the last user message, joined."""
    texts: list[str] = []
    for position in range(len(state.messages) - 1, -1, -1):
        message = state.messages[position]
        if message.role == "user":
            break
        texts.append(message.content)
    return "\n\n".join(reversed(texts))


def build(host: SessionHost, *, name: str = "agent-core", wait_seconds: float = 60.0) -> MCPServer[Any]:
    """The ``MCPServer`` offering ``host``'s sessions as tools (see the module docstring)."""
    server: MCPServer[Any] = MCPServer(
        name,
        instructions="Each tool drives a session of an agent. Start one with start_session; continue it with "
        "send_message; when its status is 'waiting', approve the pending tool calls or answer their questions.",
    )

    async def after(session_id: str, make: Any, *, create: bool = False, wait: float = wait_seconds) -> dict[str, Any]:
        try:
            await host.submit(session_id, make, create=create)
            session = await host.open(session_id, create=create)
        except Refused as refusal:
            raise ToolError(refusal.message) from None
        with anyio.move_on_after(min(max(wait, 0.0), MAX_WAIT_SECONDS)):
            await session.turn_done()
        return status(session_id, session.state)

    @server.tool(description="Start a session of the agent with a first message; returns its answer and status.")
    async def start_session(message: str, session_id: str = "") -> dict[str, Any]:
        sid = session_id or f"mcp-{secrets.token_hex(6)}"
        taken: bool = bool(session_id) and await anyio.to_thread.run_sync(session_exists, host.store, sid)
        if taken:
            raise ToolError(f"session {sid!r} already exists; expected a new id (or send_message to continue it)")
        return await after(sid, lambda state, now: [_message(state, message, now)], create=True)

    @server.tool(description="Send a message to a session; returns its answer and status once the turn ends or waits.")
    async def send_message(session_id: str, message: str) -> dict[str, Any]:
        return await after(session_id, lambda state, now: [_message(state, message, now)])

    @server.tool(description="Read a session's latest answer and status (waits up to wait_seconds for a turn).")
    async def read_answer(session_id: str, wait_seconds: float = 0.0) -> dict[str, Any]:
        return await after(session_id, lambda state, now: [], wait=wait_seconds)

    @server.tool(description="Approve (or deny, with a reason) a tool call waiting for a decision.")
    async def approve(session_id: str, tool_call_id: str, approved: bool = True, reason: str = "") -> dict[str, Any]:
        def decide(state: AgentState, now: int) -> list[AgentInput]:
            _pending(state, tool_call_id, "awaiting-approval")
            if approved:
                return [ToolCallApproved(timestamp=now, tool_call_id=tool_call_id)]
            return [ToolCallDenied(timestamp=now, tool_call_id=tool_call_id, reason=replace_surrogates(reason))]

        return await after(session_id, decide)

    @server.tool(description="Answer the questions a tool call asked, by key (MCP elicitation results).")
    async def answer_questions(session_id: str, tool_call_id: str, answers: dict[str, Any]) -> dict[str, Any]:
        def answer(state: AgentState, now: int) -> list[AgentInput]:
            _pending(state, tool_call_id, "awaiting-input")
            text = replace_surrogates(json.dumps(answers, ensure_ascii=False, separators=(",", ":")))
            return [ToolCallInputProvided(timestamp=now, tool_call_id=tool_call_id, responses=text)]

        return await after(session_id, answer)

    @server.tool(description="Stop a session's current turn.")
    async def cancel_turn(session_id: str, reason: str = "") -> dict[str, Any]:
        return await after(session_id, lambda state, now: [ReActCancelled(timestamp=now, reason=reason)])

    return server


def _message(state: AgentState, text: str, now: int) -> UserMessageReceived:
    if len(text) > MAX_MESSAGE_CHARS:
        raise ToolError(f"a message may have at most {MAX_MESSAGE_CHARS:,} characters, got {len(text):,}")
    taken = {m.id for m in state.queued}
    number = len(state.messages) + len(state.queued) + 1
    message_id = f"mcp-{number}"
    while message_id in state.message_index or message_id in taken:
        number += 1
        message_id = f"mcp-{number}"
    return UserMessageReceived(timestamp=now, message_id=message_id, content=replace_surrogates(text))


def _pending(state: AgentState, call_id: str, wanted: str) -> None:
    record = state.tool_calls.get(call_id)
    if record is None or record.status != wanted:
        waiting = [i for i in (state.turn.awaiting_ids if state.turn else ()) if state.tool_calls[i].status == wanted]
        what = "a decision" if wanted == "awaiting-approval" else "answers"
        raise ToolError(
            f"tool call {call_id!r} does not wait for {what}; expected one of: {', '.join(waiting) or 'none'}"
        )


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
