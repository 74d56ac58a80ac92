"""``AgentTool``: an agent offered to another agent's model as a tool; each call runs a child session.

The child session's id is derived from the calling session's id and the tool
call's id (:func:`child_session_id`), so a parent that resumes after a crash
reopens the same child session from its log, and never starts it twice. Its
``session-started`` records its lineage (``config.lineage``). The call's result
is the child's final answer (its structured output as JSON, when the child
declares an ``output_type``), or a failure the parent's model reads when the
child's turn fails or is cancelled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from pydantic import BaseModel

from agent_core import AgentState, Lineage, Phase, ToolFailure, ToolResult, ToolSuccess, phase

from .._store import EventStore
from .._tools import Tool
from ._caller import calling_session
from ._session_handle import Session

OpenChild = Callable[[EventStore | None, str, Lineage, Callable[[], bool]], AbstractAsyncContextManager[Session]]
"""Opens (or resumes) the child session ``session_id`` with ``lineage``, in a store or (``None``) in memory;
the last argument tells whether the call that runs it is still open."""

CancelChild = Callable[[EventStore, str], Awaitable[None]]
"""Ends the open turn of the stored child session ``session_id`` as cancelled, in its log."""


def child_session_id(parent_session_id: str, tool_call_id: str) -> str:
    """The id of the child session that the call ``tool_call_id`` of ``parent_session_id`` runs."""
    return f"{parent_session_id}:{tool_call_id}"


async def _ask(task: str) -> str:
    """A placeholder whose signature gives an agent tool its parameters; :meth:`AgentTool.invoke` runs the call."""
    raise NotImplementedError  # pragma: no cover


class AgentTool(Tool[..., str]):
    """A tool whose every call asks a child agent (see :meth:`effects.Agent.as_tool`).

    The model sends ``{"task": "..."}`` (or, with an ``input_type``, an object
    of that pydantic model); the child receives it as its user message (the
    object as JSON), runs one turn, and its answer is the call's result.
    """

    def __init__(
        self,
        open_child: OpenChild,
        cancel_child: CancelChild,
        *,
        name: str,
        description: str,
        input_type: type[BaseModel] | None = None,
        timeout_ms: int | None = None,
        max_depth: int | None = None,
        agent: object = None,
    ) -> None:
        fn: Callable[..., Any] = _ask
        if input_type is not None:

            async def ask(request: BaseModel) -> str:
                raise NotImplementedError  # pragma: no cover

            ask.__annotations__ = {"request": input_type, "return": str}
            fn = ask
        # Idempotent: running the call again (after a crash) reopens the same child session and goes on with it.
        super().__init__(fn, name=name, description=description, idempotent=True, timeout_ms=timeout_ms)
        self._open_child = open_child
        self._cancel_child = cancel_child
        self._input_type = input_type
        self.max_depth = max_depth
        self.agent = agent  # the agent whose sessions its calls run (for the checks made when a session starts)

    def __repr__(self) -> str:
        return f"<agent tool {self.name!r}>"

    async def invoke(
        self, arguments: str, tool_call_id: str, *, threads: anyio.CapacityLimiter | None = None
    ) -> ToolResult:
        """Validate ``arguments``, then run (or go on with) the child session this call started."""
        validated = self.validate(arguments, tool_call_id)
        if isinstance(validated, ToolFailure):
            return validated
        # With an input type, the validated arguments are an object of it; else the model of the ``task`` parameter.
        task: str = validated.model_dump_json() if self._input_type is not None else validated.task  # type: ignore[attr-defined]
        caller = calling_session()
        if caller is None:
            return ToolFailure(
                error=f"agent tool {self.name!r} was called outside a session (tool call {tool_call_id!r}); "
                "expected it among the tools of an Agent whose model calls it",
                code="no-session",
            )
        if self.max_depth is not None and caller.depth >= self.max_depth:
            return ToolFailure(
                error=f"agent tool {self.name!r} (tool call {tool_call_id!r}) would start a child session at depth "
                f"{caller.depth + 1} below session {caller.root_session_id!r}, deeper than its max_depth "
                f"{self.max_depth}; answer without it",
                code="max-depth",
            )
        child_id = child_session_id(caller.session_id, tool_call_id)
        lineage = Lineage(
            parent_session_id=caller.session_id,
            parent_tool_call_id=tool_call_id,
            root_session_id=caller.root_session_id,
            depth=caller.depth + 1,
        )
        try:
            async with self._open_child(caller.store, child_id, lineage, caller.open) as session:
                return await self._answer(session, task, child_id)
        except BaseException:  # a cancellation, under trio inside an exception group
            # The calling turn was cancelled (not this process stopping, which leaves the call open to resume):
            # the child's turn ends too, in its log, its dangling calls closed; its own children see it the same way.
            if caller.store is not None and not caller.open():
                with anyio.CancelScope(shield=True):
                    await self._cancel_child(caller.store, child_id)
            raise

    async def _answer(self, session: Session, task: str, child_id: str) -> ToolResult:
        """Send ``task`` unless the child's log already has it (a resumed child), wait for the turn, read it."""
        if len(session.state.messages) == 0:
            message_id = session.send(task)
            state = await session.machine.until(lambda s: message_id in s.message_index and _turn_waits(s))
        else:
            state = await session.turn_done()
        return self._result(state, child_id)

    def _result(self, state: AgentState, child_id: str) -> ToolResult:
        outcome = state.last_outcome
        where = f"agent {self.name!r} (child session {child_id!r})"
        if state.turn is not None:  # awaiting approval: refused by as_tool, so a log written otherwise
            return ToolFailure(error=f"{where} waits for an approval, which a child session cannot get yet")
        if outcome is None or outcome.kind != "completed":
            kind = outcome.kind if outcome is not None else "not run"
            why = f": {outcome.reason}" if outcome is not None and outcome.reason else ""
            detail = f" ({outcome.detail})" if outcome is not None and outcome.detail else ""
            return ToolFailure(error=f"{where} {kind}{why}{detail}", code="agent-failed")
        if state.config.output_schema:
            return ToolSuccess(content=outcome.output)
        messages = state.messages
        answers = [messages[i].content for i in range(len(messages)) if messages[i].role == "assistant"]
        return ToolSuccess(content=answers[-1] if answers else "")


def _turn_waits(state: AgentState) -> bool:
    return state.turn is None or phase(state) is Phase.AWAITING_APPROVAL
