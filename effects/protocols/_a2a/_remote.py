"""A remote A2A agent called as a tool: the model sends it a message; its task is followed to its end.

The first attempt sends the message (its id is the tool call's id) and asks
for the task at once; the task's id is logged (``tool-call-task-created``)
before the call waits for it, so a session resumed after a crash polls that
task and never sends the message again. A task that asks for input
(``input-required``) waits for a person like a tool's question: the answer
is sent to the task, and the task followed again. The result the model reads
is the task's artifacts (or its last message); a failed, rejected or canceled
task is a failure with the agent's reason.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import anyio
import httpx
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from google.protobuf.json_format import MessageToDict
from pydantic import ValidationError

from agent_core import ToolFailure, ToolSuccess
from effects import InputRequired, Resumption, TaskCreated, Tool, ToolOutcome

from ._shapes import data_part, part_value

DEFAULT_POLL_SECONDS = 0.5
"""How often a remote task is looked at while it works."""

_DONE = {
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_AUTH_REQUIRED: "waiting for authentication, which this client cannot give",
}


async def ask(message: str) -> str:
    """Send the remote agent a message; its answer comes back.

    Args:
        message: what to ask the remote agent, in full (it does not see this conversation)
    """
    raise AssertionError("a RemoteAgent's calls go through attempt()")


class RemoteAgent(Tool[..., Any]):
    """A remote A2A agent at ``url`` (its card is read from ``/.well-known/agent-card.json``), as a tool.

    Use it as an async context manager (it holds an HTTP client); pass it to an
    agent like a ``@tool`` function. See the module docstring for how a call
    runs and resumes.
    """

    def __init__(
        self,
        url: str,
        *,
        name: str,
        description: str = "",
        requires_approval: bool = False,
        timeout_ms: int | None = None,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            ask,
            name=name,
            description=description or f"Ask the remote agent at {url}.",
            requires_approval=requires_approval,
            timeout_ms=timeout_ms,
        )
        self.url = url
        self.poll_seconds = poll_seconds
        self._headers = headers or {}
        self._http: httpx.AsyncClient | None = None
        self._client: Any = None

    def __repr__(self) -> str:
        return f"<RemoteAgent {self.name!r} at {self.url!r}>"

    async def __aenter__(self) -> RemoteAgent:
        self._http = httpx.AsyncClient(headers=self._headers, timeout=60)
        try:
            config = ClientConfig(httpx_client=self._http, streaming=False, polling=True)
            self._client = await create_client(self.url, config)
        except BaseException:
            await self._http.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        client, http, self._client, self._http = self._client, self._http, None, None
        if client is not None:
            await client.close()
        if http is not None:
            await http.aclose()

    async def attempt(
        self,
        arguments: str,
        tool_call_id: str,
        resumption: Resumption | None = None,
        *,
        threads: anyio.CapacityLimiter | None = None,
    ) -> ToolOutcome:
        """Send the message (first attempt), or follow the task (and send a person's answer to it)."""
        if self._client is None:
            return ToolFailure(error=f"remote agent {self.name!r} is not connected (use it inside `async with`)")
        try:
            if resumption is not None and resumption.task_id:
                return await self._follow(tool_call_id, resumption)
            try:
                message = self.signature.model.model_validate_json(arguments or "{}").message  # type: ignore[attr-defined]
            except ValidationError as error:
                return ToolFailure(
                    error=f'tool {self.name!r}: expected {{"message": "..."}}: {error.errors()[0]["msg"]}'
                )
            return await self._send(tool_call_id, message)
        except Exception as error:  # the remote agent's errors and a dead connection alike: the model reads them
            return ToolFailure(error=f"remote agent {self.name!r} at {self.url}: {error or type(error).__name__}")

    async def _send(self, tool_call_id: str, text: str) -> ToolOutcome:
        request = SendMessageRequest(
            message=Message(message_id=tool_call_id, role=Role.ROLE_USER, parts=[Part(text=text)])
        )
        async for response in self._client.send_message(request):
            if response.HasField("message"):
                return ToolSuccess(content=_text(response.message.parts))
            task = response.task
            if task.status.state in _DONE:
                return self._ended(task)
            return TaskCreated(task_id=task.id)
        return ToolFailure(error=f"remote agent {self.name!r} answered with nothing; expected a task or a message")

    async def _follow(self, tool_call_id: str, resumption: Resumption) -> ToolOutcome:
        task_id = resumption.task_id
        task = await self._client.get_task(GetTaskRequest(id=task_id))
        if resumption.input_responses and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answer(tool_call_id, task, resumption.input_responses)
            task = await self._client.get_task(GetTaskRequest(id=task_id))
        while True:
            state = task.status.state
            if state in _DONE:
                return self._ended(task)
            if state == TaskState.TASK_STATE_INPUT_REQUIRED:
                question = {
                    "reply": {
                        "agent": self.name,
                        "task_id": task.id,
                        "message": _text(task.status.message.parts),
                        "data": [v for k, v in map(part_value, task.status.message.parts) if k == "data"],
                    }
                }
                return InputRequired(requests=json.dumps(question, ensure_ascii=False, separators=(",", ":")))
            await anyio.sleep(self.poll_seconds)
            task = await self._client.get_task(GetTaskRequest(id=task_id))

    async def _answer(self, tool_call_id: str, task: Task, responses: str) -> None:
        """Send a person's answers to a task that asked (each answer a part: text as text, anything else as data)."""
        answers = json.loads(responses)
        values = answers.values() if isinstance(answers, dict) else [answers]
        parts = [Part(text=value) if isinstance(value, str) else data_part(value) for value in values]
        digest = hashlib.sha256(responses.encode()).hexdigest()[:12]
        message = Message(
            message_id=f"{tool_call_id}/answer-{digest}",
            task_id=task.id,
            context_id=task.context_id,
            role=Role.ROLE_USER,
            parts=parts,
        )
        async for _ in self._client.send_message(SendMessageRequest(message=message)):
            break

    def _ended(self, task: Task) -> ToolSuccess | ToolFailure:
        state = task.status.state
        if state == TaskState.TASK_STATE_COMPLETED:
            texts = [_text(artifact.parts) for artifact in task.artifacts]
            return ToolSuccess(content="\n\n".join(t for t in texts if t) or _text(task.status.message.parts))
        reason = _text(task.status.message.parts) or "no reason given"
        return ToolFailure(error=f"remote agent {self.name!r}: task {task.id!r} {_DONE[state]}: {reason}")


def _text(parts: Any) -> str:
    """The text of parts: text as it is, data as JSON."""
    out = []
    for part in parts:
        kind, value = part_value(part)
        if kind == "text":
            out.append(value)
        elif kind == "data":
            out.append(json.dumps(value, ensure_ascii=False))
        elif kind:
            out.append(json.dumps(MessageToDict(part)))
    return "\n".join(out)
