"""The MCP 2026-07-28 shapes the client needs beyond the SDK's core: the tasks extension, answers, questions.

Imported when an :class:`~effects.providers.McpServer` is built (the ``mcp``
extra). The tasks extension (``io.modelcontextprotocol/tasks``) is declared so
a server may answer ``tools/call`` with a task handle (``resultType: "task"``);
the call then follows the task with ``tasks/get`` (and ``tasks/update`` for
answers), by id, which survives a restart of this process.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import (
    INVALID_REQUEST,
    CallToolResult,
    ErrorData,
    InputResponses,
    Request,
    Result,
    TextContent,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

TASKS = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier."""

TERMINAL = ("completed", "failed", "cancelled")

DEFAULT_POLL_MS = 1_000
MIN_POLL_MS = 50
MAX_POLL_MS = 10_000
"""A task is polled every ``pollIntervalMs`` (the server's hint), kept between these bounds."""


class CreateTaskResult(Result):
    """A server's answer to ``tools/call`` that hands the call to a task (``resultType: "task"``)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str = "working"
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    """A task as ``tasks/get`` returns it: its status, and its result, error or questions."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskRequest(Request[dict[str, Any], str]):
    """``tasks/get`` or ``tasks/update`` (the task id is mirrored in the ``Mcp-Name`` header, as SEP-2663 asks)."""

    name_param = "taskId"


async def _resolve(result: CreateTaskResult, context: ClaimContext) -> CallToolResult:
    """Follow a task to its end (for callers of the SDK's ``call_tool``; the agent follows tasks itself)."""
    while True:
        state = await get_task(context.session, result.task_id)
        if state.status in TERMINAL:
            if state.status == "completed" and state.result is not None:
                return CallToolResult.model_validate(state.result)
            text = state.status_message or json.dumps(state.error or {})
            return CallToolResult(
                content=[TextContent(type="text", text=f"task {state.status}: {text}")], is_error=True
            )
        await anyio.sleep(poll_seconds(state.poll_interval_ms))


class Tasks(ClientExtension):
    """Declares the tasks extension; task handles from ``tools/call`` are claimed (returned as :class:`CreateTaskResult`)."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=_resolve)]


async def get_task(session: Any, task_id: str) -> TaskState:
    """``tasks/get``."""
    request = TaskRequest(method="tasks/get", params={"taskId": task_id})
    return await session.send_request(request, TaskState)  # type: ignore[no-any-return]


async def update_task(session: Any, task_id: str, responses: dict[str, Any]) -> None:
    """``tasks/update``: deliver answers to the task's questions."""
    request = TaskRequest(method="tasks/update", params={"taskId": task_id, "inputResponses": responses})
    await session.send_request(request, Result)


def poll_seconds(hint_ms: int | None) -> float:
    """Seconds to wait before polling a task again: the server's hint, bounded."""
    return min(max(hint_ms or DEFAULT_POLL_MS, MIN_POLL_MS), MAX_POLL_MS) / 1000


_RESPONSES: TypeAdapter[InputResponses] = TypeAdapter(InputResponses)


def parsed_responses(text: str) -> InputResponses | str:
    """A person's answers (JSON text) as MCP ``InputResponses``, or a sentence saying what is wrong with them."""
    try:
        return _RESPONSES.validate_python(json.loads(text), by_alias=True)
    except (ValueError, ValidationError) as error:
        return f"the answers are not MCP input responses ({str(error).splitlines()[0]})"


def questions(requests: dict[str, Any] | None) -> str:
    """Input requests as the JSON text the log keeps."""
    encoded = {
        key: value.model_dump(mode="json", by_alias=True, exclude_none=True) if isinstance(value, BaseModel) else value
        for key, value in (requests or {}).items()
    }
    return json.dumps(encoded, ensure_ascii=False, separators=(",", ":"))


async def refuse_mid_call(context: Any, params: Any) -> ErrorData:
    """The elicitation callback of a handshake-era server (which asks in the middle of a call): refused, since
    a person answers only between attempts (2026-07-28's ``input_required``)."""
    return ErrorData(
        code=INVALID_REQUEST,
        message="this client answers questions only through input_required results (MCP 2026-07-28)",
    )
