"""The A2A request handler over a :class:`SessionHost`: messages become inputs, turns become tasks.

* ``SendMessage`` (``message/send``) without a ``taskId`` adds the user's message to
  the session named by ``contextId`` (a new session when there is none): the
  task is the turn it opens or joins. It waits until the turn ends or waits
  for a person (``returnImmediately`` answers at once). With the ``taskId`` of
  a task in ``input-required``, the message's data parts decide the pending
  tool calls (see :data:`DECISION_HELP`).
* ``SendStreamingMessage`` (``message/stream``) sends the task, then a status
  update for each message of the agent and for each change of state, the
  answer as an artifact, and ends when the turn ends or waits.
* ``GetTask``, ``ListTasks``, ``CancelTask`` (``re-act-cancelled``) and
  ``SubscribeToTask`` read the log. Push notifications are not offered.

Every refusal is an A2A error saying what was expected; nothing is written for it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from agent_core import (
    AgentInput,
    AgentState,
    ReActCancelled,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallInputProvided,
    UserMessageReceived,
    replace_surrogates,
)
from effects import SessionNotFound

from .._host import SessionHost
from .._sessions import Refused
from ._shapes import DECISION_HELP, artifacts_of, history_of, part_value, state_name, state_of, status_of, task_of
from ._turns import SessionView, fold_session, parse_task_id, task_id

MAX_MESSAGE_CHARS = 1_000_000
MAX_TASKS_LISTED = 100
_SETTLED = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_INPUT_REQUIRED,
)


class SessionTasks(RequestHandler):
    """A2A over the sessions of ``host`` (see the module docstring)."""

    def __init__(self, host: SessionHost, wait_seconds: float) -> None:
        self.host = host
        self.wait_seconds = wait_seconds

    # --- messages ----------------------------------------------------------------

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        """Send the message; the task, once its turn ends or waits (at once with ``returnImmediately``)."""
        session_id, number = await self._send(params.message)
        if params.configuration.return_immediately:
            view = await self._fold(session_id)
        else:
            view = await self._settled(session_id, number)
        return task_of(view, session_id, number, _history_length(params.configuration))

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        """Send the message, then stream the task's progress until its turn ends or waits."""
        session_id, number = await self._send(params.message)
        async for event in self._progress(session_id, number, first=True):
            yield event

    async def _send(self, message: Message) -> tuple[str, int]:
        """Write what the message asks for; the task's session and turn."""
        if message.role != Role.ROLE_USER:
            raise InvalidParamsError(f"expected a message with role ROLE_USER, got {Role.Name(message.role)}")
        if message.task_id:
            found = parse_task_id(message.task_id)
            if found is None or found[0] != (message.context_id or found[0]):
                raise TaskNotFoundError(_unknown_task(message.task_id))
            session_id, number = found
            await self._submit(session_id, lambda state, now: _continued(state, message, number, now))
            return session_id, number
        session_id = message.context_id or f"a2a-{secrets.token_hex(8)}"
        message_id = message.message_id or f"a2a-{secrets.token_hex(8)}"
        text = _text(message)
        await self._submit(session_id, lambda state, now: _new_message(state, message_id, text, now), create=True)
        view = await self._fold(session_id)
        for number, turn in view.turns.items():
            if message_id in turn.message_ids:
                return session_id, number
        queued = view.state.turns + 1  # queued behind the open turn (user_message_policy "queue")
        return session_id, queued

    async def _submit(self, session_id: str, make: Any, *, create: bool = False) -> None:
        try:
            await self.host.submit(session_id, make, create=create)
        except Refused as refusal:
            raise InvalidParamsError(refusal.message) from None

    # --- tasks -------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        """The task, from the log (its history limited to ``historyLength`` messages)."""
        session_id, number, view = await self._task(params.id)
        limit = params.history_length if params.HasField("history_length") else None
        return task_of(view, session_id, number, limit)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The tasks of the session ``contextId`` (required), newest first, at most ``pageSize`` (100)."""
        if not params.context_id:
            raise InvalidParamsError("expected a contextId: tasks are listed per session")
        view = await self._fold(params.context_id)
        size = min(params.page_size or MAX_TASKS_LISTED, MAX_TASKS_LISTED)
        limit = params.history_length if params.HasField("history_length") else None
        numbers = sorted(view.turns, reverse=True)
        if params.status:
            numbers = [n for n in numbers if state_of(view, n) == params.status]
        tasks = [task_of(view, params.context_id, n, limit) for n in numbers[:size]]
        return ListTasksResponse(tasks=tasks, page_size=size, total_size=len(numbers))

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        """Cancel the task's turn (``re-act-cancelled``); a task that already ended cannot be."""
        session_id, number, view = await self._task(params.id)
        if view.turns[number].outcome is not None:
            state = state_name(state_of(view, number))
            raise TaskNotCancelableError(
                f"task {params.id!r} is {state}; expected a working or input-required task to cancel"
            )
        await self._submit(session_id, lambda state, now: [ReActCancelled(timestamp=now, reason="canceled over A2A")])
        return task_of(await self._fold(session_id), session_id, number)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        """Stream a working task's progress (from now) until it ends or waits."""
        session_id, number, view = await self._task(params.id)
        if state_of(view, number) != TaskState.TASK_STATE_WORKING:
            state = state_name(state_of(view, number))
            raise UnsupportedOperationError(f"task {params.id!r} is {state}; expected a working task to subscribe to")
        async for event in self._progress(session_id, number, first=True):
            yield event

    async def _task(self, text: str) -> tuple[str, int, SessionView]:
        found = parse_task_id(text)
        if found is None:
            raise TaskNotFoundError(_unknown_task(text))
        session_id, number = found
        try:
            view = await self._fold(session_id)
        except InvalidParamsError:
            raise TaskNotFoundError(_unknown_task(text)) from None
        if number not in view.turns:
            raise TaskNotFoundError(_unknown_task(text))
        return session_id, number, view

    async def _fold(self, session_id: str) -> SessionView:
        try:
            return await anyio.to_thread.run_sync(fold_session, self.host.store, session_id)
        except SessionNotFound:
            raise InvalidParamsError(f"no session {session_id!r}; expected the contextId of a session here") from None

    async def _settled(self, session_id: str, number: int) -> SessionView:
        """The session once turn ``number`` ended or waits for a person (or when ``wait_seconds`` passed)."""
        view = await self._fold(session_id)
        with anyio.move_on_after(self.wait_seconds):
            while number not in view.turns or state_of(view, number) not in _SETTLED:
                version = self.host.version(session_id)
                view = await self._fold(session_id)
                if number in view.turns and state_of(view, number) in _SETTLED:
                    break
                await self.host.wait(session_id, version)
        return view

    async def _progress(self, session_id: str, number: int, *, first: bool) -> AsyncIterator[Event]:
        """The task, then a status update per new message of the agent and per change of state, the answer as
        an artifact, until the turn ends or waits."""
        sent_messages: set[str] = set()
        last_state = None
        while True:
            version = self.host.version(session_id)
            view = await self._fold(session_id)
            if number not in view.turns:  # still queued behind another turn
                await self.host.wait(session_id, version)
                continue
            state = state_of(view, number)
            if first:
                first = False
                task = task_of(view, session_id, number)
                sent_messages.update(m.message_id for m in task.history)
                last_state = state
                yield task
            for message in history_of(view, session_id, number):
                if message.message_id not in sent_messages and message.role == Role.ROLE_AGENT:
                    sent_messages.add(message.message_id)
                    update = TaskStatusUpdateEvent(task_id=task_id(session_id, number), context_id=session_id)
                    update.status.state = TaskState.TASK_STATE_WORKING
                    update.status.message.CopyFrom(message)
                    yield update
            if state != last_state or state in _SETTLED:
                for artifact in artifacts_of(view, session_id, number):
                    yield TaskArtifactUpdateEvent(
                        task_id=task_id(session_id, number), context_id=session_id, artifact=artifact, last_chunk=True
                    )
                if state != last_state or state in _SETTLED:
                    status = status_of(view, session_id, number)
                    yield TaskStatusUpdateEvent(
                        task_id=task_id(session_id, number), context_id=session_id, status=status
                    )
                last_state = state
            if state in _SETTLED:
                return
            await self.host.wait(session_id, version)

    # --- not offered -------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not offered."""
        raise PushNotificationNotSupportedError("push notifications are not offered; stream or poll the task")

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Not offered."""
        raise PushNotificationNotSupportedError("push notifications are not offered; stream or poll the task")

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """Not offered."""
        raise PushNotificationNotSupportedError("push notifications are not offered; stream or poll the task")

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Not offered."""
        raise PushNotificationNotSupportedError("push notifications are not offered; stream or poll the task")

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """Not offered: the public card is the whole card."""
        raise UnsupportedOperationError("there is no extended agent card; the public card is the whole card")


def _history_length(configuration: Any) -> int | None:
    return configuration.history_length if configuration.HasField("history_length") else None


def _unknown_task(text: str) -> str:
    return f"no task {text!r}; expected a task id this server gave (<contextId>:<turn>)"


def _text(message: Message) -> str:
    """The message's text: its text parts, and its data parts as JSON."""
    pieces = []
    for part in message.parts:
        kind, value = part_value(part)
        if kind == "text":
            pieces.append(value)
        elif kind == "data":
            pieces.append(json.dumps(value, ensure_ascii=False))
        else:
            raise InvalidParamsError(f"expected text or data parts, got a {kind or 'empty'} part")
    text = "\n".join(pieces)
    if not text:
        raise InvalidParamsError("expected a message with text; it has none")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidParamsError(f"expected at most {MAX_MESSAGE_CHARS:,} characters, got {len(text):,}")
    return replace_surrogates(text)


def _new_message(state: AgentState, message_id: str, text: str, now: int) -> list[AgentInput]:
    if message_id in state.message_index or any(m.id == message_id for m in state.queued):
        return []  # sent again (a retry): it is in the log already
    return [UserMessageReceived(timestamp=now, message_id=message_id, content=text)]


def _continued(state: AgentState, message: Message, number: int, now: int) -> list[AgentInput]:
    """The inputs of a message to an existing task: decisions for a task that waits, or the user's words for
    a working one."""
    turn = state.turn
    if turn is None or turn.number != number:
        raise InvalidParamsError(
            f"task {message.task_id!r} has ended; it takes no more messages: send a new message without taskId "
            f"(contextId {message.context_id or '<session>'!r}) to continue the conversation"
        )
    if turn.open_call_ids or not turn.awaiting_ids:
        return _new_message(state, message.message_id or f"a2a-{secrets.token_hex(8)}", _text(message), now)
    return _decisions(state, message, now)


def _decisions(state: AgentState, message: Message, now: int) -> list[AgentInput]:
    assert state.turn is not None
    pending = state.turn.awaiting_ids
    inputs: list[AgentInput] = []
    for part in message.parts:
        kind, value = part_value(part)
        if kind != "data" or not isinstance(value, dict) or value.get("tool_call_id") not in pending:
            raise InvalidParamsError(
                f"task {message.task_id!r} waits for a person on tool call(s) {', '.join(pending)}; expected "
                f"{DECISION_HELP}, got {json.dumps(value)[:120] if kind == 'data' else f'a {kind} part'}"
            )
        inputs.append(_decision(state, value, now))
    if not inputs:
        raise InvalidParamsError(f"task {message.task_id!r} waits for a person; expected {DECISION_HELP}")
    return inputs


def _decision(state: AgentState, value: dict[str, Any], now: int) -> AgentInput:
    call_id = str(value["tool_call_id"])
    record = state.tool_calls[call_id]
    if record.status == "awaiting-input":
        answers = value.get("answers")
        if not isinstance(answers, dict) or not answers:
            raise InvalidParamsError(f'tool call {call_id!r} asked questions; expected "answers": {{key: answer}}')
        text = replace_surrogates(json.dumps(answers, ensure_ascii=False, separators=(",", ":")))
        return ToolCallInputProvided(timestamp=now, tool_call_id=call_id, responses=text)
    approved = value.get("approved")
    if not isinstance(approved, bool):
        raise InvalidParamsError(f'tool call {call_id!r} waits for a decision; expected "approved": true or false')
    if approved:
        return ToolCallApproved(timestamp=now, tool_call_id=call_id)
    return ToolCallDenied(timestamp=now, tool_call_id=call_id, reason=replace_surrogates(str(value.get("reason", ""))))
