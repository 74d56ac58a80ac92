"""A2A 1.0 shapes (the SDK's protobuf types) of a session's turns: tasks, statuses, messages, artifacts."""

from __future__ import annotations

import datetime
import json
from typing import Any

from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from agent_core import ToolCallRecord

from ._turns import SessionView, task_id

DECISION_HELP = (
    'a data part {"tool_call_id": "...", "approved": true} (or false, with a "reason"), or, for a call that '
    'asked questions, {"tool_call_id": "...", "answers": {...}}'
)
"""What a message answering an input-required task carries."""


def data_part(value: Any) -> Part:
    """A part holding JSON ``value``."""
    return Part(data=ParseDict(value, struct_pb2.Value()))


def part_value(part: Part) -> tuple[str, Any]:
    """``("text", str)``, ``("data", value)``, or the part's other kind and ``None``."""
    kind = part.WhichOneof("content") or ""
    if kind == "text":
        return kind, part.text
    if kind == "data":
        return kind, MessageToDict(part.data)
    return kind, None


def state_of(view: SessionView, number: int) -> int:
    """The A2A state of turn ``number``."""
    outcome = view.turns[number].outcome
    if outcome is None:
        return TaskState.TASK_STATE_INPUT_REQUIRED if view.pending(number) else TaskState.TASK_STATE_WORKING
    if outcome.kind == "completed":
        return TaskState.TASK_STATE_COMPLETED
    if outcome.kind == "cancelled":
        return TaskState.TASK_STATE_CANCELED
    return TaskState.TASK_STATE_FAILED


def state_name(state: int) -> str:
    """``working``, ``input-required``... for messages a person reads."""
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def status_of(view: SessionView, session_id: str, number: int) -> TaskStatus:
    """The turn's status, with a message from the agent when it waits, failed, or was canceled."""
    turn = view.turns[number]
    state = state_of(view, number)
    message = None
    pending = view.pending(number)
    if pending:
        text = "waiting for a person: " + "; ".join(_asks(record) for record in pending)
        data = [_pending(record) for record in pending]
        parts = [Part(text=f"{text}. Answer with {DECISION_HELP}."), data_part({"pending": data})]
        message = _agent(session_id, number, f"{task_id(session_id, number)}/status", parts)
    elif turn.outcome is not None and turn.outcome.kind != "completed":
        reason = turn.outcome.detail or turn.outcome.reason or turn.outcome.kind
        message = _agent(session_id, number, f"{task_id(session_id, number)}/status", [Part(text=reason)])
    stamp = datetime.datetime.fromtimestamp(turn.updated_at / 1000, tz=datetime.UTC)
    status = TaskStatus(state=state, timestamp=stamp)  # type: ignore[arg-type]
    if message is not None:
        status.message.CopyFrom(message)
    return status


def history_of(view: SessionView, session_id: str, number: int, limit: int | None = None) -> list[Message]:
    """The turn's messages, the user's and the agent's, in order (the last ``limit`` of them)."""
    messages, index = view.state.messages, view.state.message_index
    out = []
    for message_id in view.turns[number].message_ids:
        message = messages[index[message_id]]
        if message.role == "assistant" and not message.content:
            continue
        role = Role.ROLE_USER if message.role == "user" else Role.ROLE_AGENT
        out.append(
            Message(
                message_id=message.id,
                context_id=session_id,
                task_id=task_id(session_id, number),
                role=role,
                parts=[Part(text=message.content)],
            )
        )
    return out if limit is None else out[len(out) - limit :] if limit else []


def artifacts_of(view: SessionView, session_id: str, number: int) -> list[Artifact]:
    """A completed turn's answer, as its one artifact."""
    if state_of(view, number) != TaskState.TASK_STATE_COMPLETED:
        return []
    answer = view.answer(number)
    name = f"{task_id(session_id, number)}/answer"
    return [Artifact(artifact_id=name, name="answer", parts=[Part(text=answer)])] if answer else []


def task_of(view: SessionView, session_id: str, number: int, history_length: int | None = None) -> Task:
    """Turn ``number`` as an A2A task: status, history and artifacts, all from the log."""
    return Task(
        id=task_id(session_id, number),
        context_id=session_id,
        status=status_of(view, session_id, number),
        history=history_of(view, session_id, number, history_length),
        artifacts=artifacts_of(view, session_id, number),
    )


def _agent(session_id: str, number: int, message_id: str, parts: list[Part]) -> Message:
    return Message(
        message_id=message_id,
        context_id=session_id,
        task_id=task_id(session_id, number),
        role=Role.ROLE_AGENT,
        parts=parts,
    )


def _asks(record: ToolCallRecord) -> str:
    if record.status == "awaiting-input":
        return f"{record.name} ({record.id}) asks questions"
    return f"approve {record.name}({record.parameters}) ({record.id})?"


def _pending(record: ToolCallRecord) -> dict[str, Any]:
    item: dict[str, Any] = {"tool_call_id": record.id, "tool": record.name, "arguments": _json(record.parameters)}
    if record.status == "awaiting-input":
        item["questions"] = _json(record.input_requests)
    return item


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
