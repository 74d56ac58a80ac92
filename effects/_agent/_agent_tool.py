"""``AgentTool``: an agent offered to another agent's model as a tool; each call runs a child session.

The child session's id is derived from the calling session's id and the tool
call's id (:func:`child_session_id`), so a parent that resumes after a crash
reopens the same child session from its log, and never starts it twice. Its
``session-started`` records its lineage (``config.lineage``). The call's result
is the child's final answer (its structured output as JSON, when the child
declares an ``output_type``), or a failure the parent's model reads when the
child's turn fails or is cancelled.

While the child runs, what it has spent so far (model calls, tool calls,
tokens, cost, its own children's included: :func:`agent_core.spent`) is
reported to the parent as ``child-spent`` inputs, in the parent's log, so the
parent's budgets count it as it happens and a replay of the parent's log alone
counts it the same. A call stopped by its timeout ends the child's turn, in its log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from pydantic import BaseModel

from agent_core import (
    AgentConfig,
    AgentState,
    Lineage,
    Phase,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    approval_requests,
    decisions_in,
    pending_approvals,
    phase,
    spent,
)

from .._store import child_session_id
from .._tools import InputRequired, Resumption, Tool, ToolOutcome
from ._caller import Caller, calling_session
from ._session_handle import Session
from ._tree import forwarded

OpenChild = Callable[[Caller, str, Lineage], AbstractAsyncContextManager[Session]]
"""Opens (or resumes) the child session ``session_id`` with ``lineage`` for the calling session ``caller``: in
its store or (``None``) in memory, drawing from its budget pool when the child has none of its own."""

CancelChild = Callable[[Caller, str, str], Awaitable[None]]
"""Ends the open turn of the child session ``session_id`` of the calling session ``caller`` as cancelled for
``reason``: in its log (and the turns of the children it was running or waiting on, in theirs), or, for a child
in memory, in the state held for it while it waits for a decision (a child in memory that is not held is gone)."""


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
        config: AgentConfig | None = None,
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
        self.config = (
            config  # the config of its child sessions (the agent's, with the limits as_tool gives), no lineage
        )

    def __repr__(self) -> str:
        return f"<agent tool {self.name!r}>"

    async def invoke(
        self, arguments: str, tool_call_id: str, *, threads: anyio.CapacityLimiter | None = None
    ) -> ToolResult:
        """Run the call as far as it goes; a child that waits for a decision is a failure here (use :meth:`attempt`)."""
        outcome = await self.attempt(arguments, tool_call_id, threads=threads)
        if isinstance(outcome, ToolSuccess | ToolFailure):
            return outcome
        return ToolFailure(
            error=f"agent {self.name!r} (tool call {tool_call_id!r}) waits for a decision on a call of its "
            "child session; expected it to run as a tool of an agent, whose session can take the decision"
        )

    async def attempt(
        self,
        arguments: str,
        tool_call_id: str,
        resumption: Resumption | None = None,
        *,
        threads: anyio.CapacityLimiter | None = None,
    ) -> ToolOutcome:
        """Validate ``arguments``, then run (or go on with) the child session this call started.

        A child that waits for a decision on one of its calls (or on a call of
        its own children) suspends this call with one request per waiting call
        (:class:`~effects.InputRequired`, see :func:`~agent_core.approval_requests`);
        attempted again with the decisions (``resumption.input_responses``), it
        passes them on to the child, which goes on.
        """
        task = self.task(arguments, tool_call_id)
        if isinstance(task, ToolFailure):
            return task
        caller = calling_session()
        if caller is None:
            return ToolFailure(
                error=f"agent tool {self.name!r} was called outside a session (tool call {tool_call_id!r}); "
                "expected it among the tools of an Agent whose model calls it",
                code="no-session",
            )
        deep = too_deep(self.name, tool_call_id, caller.depth, caller.root_session_id, self.max_depth)
        if deep is not None:
            return deep
        child_id = child_session_id(caller.session_id, tool_call_id)
        lineage = Lineage(
            parent_session_id=caller.session_id,
            parent_tool_call_id=tool_call_id,
            root_session_id=caller.root_session_id,
            depth=caller.depth + 1,
        )
        decisions = resumption.input_responses if resumption is not None else ""
        try:
            async with self._open_child(caller, child_id, lineage) as session:
                with forwarded(session, child_id, caller.publish):  # the caller's subscribers see the child's events
                    return await self._answer(session, task, child_id, caller, decisions)
        except BaseException:  # a cancellation, under trio inside an exception group
            # The calling turn was cancelled (not this process stopping, which leaves the call open to resume):
            # the child's turn ends too, in its log, its dangling calls closed; its own children see it the same way.
            if not caller.open():
                with anyio.CancelScope(shield=True):
                    await self._cancel_child(caller, child_id, CALLER_CANCELLED)
            raise

    async def cancel_child(self, caller: Caller, tool_call_id: str, reason: str) -> None:
        """End the turn of the child session that the call ``tool_call_id`` of ``caller`` ran, as cancelled for
        ``reason``, and the turns of the children below it: for a call closed while its child waited for a
        decision (its turn ended), when no attempt of the call runs to see it."""
        await self._cancel_child(caller, child_session_id(caller.session_id, tool_call_id), reason)

    def task(self, arguments: str, tool_call_id: str) -> str | ToolFailure:
        """The child's user message for a call with ``arguments``: the ``task`` text, or the ``input_type``
        object as JSON; a failure the calling model reads for arguments that do not validate."""
        validated = self.validate(arguments, tool_call_id)
        if isinstance(validated, ToolFailure):
            return validated
        # With an input type, the validated arguments are an object of it; else the model of the ``task`` parameter.
        task: str = validated.model_dump_json() if self._input_type is not None else validated.task  # type: ignore[attr-defined]
        return task

    async def timed_out(self, tool_call_id: str, timeout_ms: int) -> None:
        """The call ran out of time: its child's turn ends as cancelled, in its log (a stored child; an in-memory
        one ended with the call), and so do the turns of the children it was running."""
        caller = calling_session()
        if caller is not None and caller.store is not None:
            child_id = child_session_id(caller.session_id, tool_call_id)
            reason = f"the calling tool call {tool_call_id!r} timed out after {timeout_ms} ms"
            await self._cancel_child(caller, child_id, reason)

    async def _answer(self, session: Session, task: str, child_id: str, caller: Caller, responses: str) -> ToolOutcome:
        """Send ``task`` unless the child's log already has it (a resumed child), pass on the decisions in
        ``responses`` that it still waits for, then wait for the turn, reporting what the child spends as it
        changes; read the answer."""
        message_id = session.send(task) if len(session.state.messages) == 0 else ""
        decided = {}
        if not message_id:
            waiting = {p.address for p in session.pending_approvals}
            # Only what the child still waits for: after a crash the decisions may be in its log already.
            decided = {a: d for a, d in decisions_in(responses).items() if a in waiting}
            if decided:
                session.decide({a: True if d.approve else d.reason for a, d in decided.items()})

        def done(state: AgentState) -> bool:
            if message_id and message_id not in state.message_index:
                return False
            if decided and decided.keys() & {p.address for p in pending_approvals(state)}:
                return False
            return _turn_waits(state)

        reported = [caller.reported]
        while True:
            state = await session.machine.until(lambda s: done(s) or spent(s) != reported[0])
            now = spent(state)
            if now != reported[0]:
                await caller.report(now)  # refused once the call is closed; the call is then cancelled anyway
                reported[0] = now
            if done(state):
                return child_result(self.name, state, child_id)


CALLER_CANCELLED = "the calling turn was cancelled"
"""Why a child's turn ended when the call that ran it was closed: the calling turn ended or was cancelled."""


def _turn_waits(state: AgentState) -> bool:
    return state.turn is None or phase(state) is Phase.AWAITING_APPROVAL


def child_result(name: str, state: AgentState, child_id: str) -> ToolOutcome:
    """The result of the call of agent tool ``name`` whose child session ``child_id`` is in ``state``: its
    answer (or structured output), a failure when its turn failed or was cancelled, or the requests of the calls
    it waits for a decision on."""
    outcome = state.last_outcome
    where = f"agent {name!r} (child session {child_id!r})"
    if state.turn is not None:  # the child waits for a person: so does this call, asking for the decisions
        requests = approval_requests(state)
        if requests != "{}":
            return InputRequired(requests=requests)
        return ToolFailure(error=f"{where} waits for input that a child session cannot get from its caller")
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


def too_deep(
    name: str, tool_call_id: str, depth: int, root_session_id: str, max_depth: int | None
) -> ToolFailure | None:
    """The failure of a call of agent tool ``name`` from a session at ``depth`` below ``root_session_id`` that
    would start a child deeper than ``max_depth`` (``None``: no limit, or not too deep)."""
    if max_depth is None or depth < max_depth:
        return None
    return ToolFailure(
        error=f"agent tool {name!r} (tool call {tool_call_id!r}) would start a child session at depth "
        f"{depth + 1} below session {root_session_id!r}, deeper than its max_depth {max_depth}; answer without it",
        code="max-depth",
    )
