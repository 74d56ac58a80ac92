"""Ending the turns of child sessions that a closed call left waiting for a decision.

A call of an agent tool whose child waits for a decision is ``awaiting-input``
in its session: no effect runs it, so when the session's turn ends meanwhile
(cancelled, failed, out of time) nothing is cancelled and the child would stay
``awaiting-approval`` for ever. While the session runs, this watches its
committed states: a call of an agent tool that stops waiting without running
again (its turn closed it) ends its child's turn as cancelled, in the child's
log (or, in memory, in the state held for it), and so on down the tree. Once the
session stops, what its last inputs closed is looked at once more. A stored session reopened after a turn that
ended other than by an answer looks at that turn's calls of agent tools again first: its process may have stopped
before it ended their children, left waiting for a decision or still running their own calls (a cancellation
committed just before the process died).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

import anyio

from agent_core import AgentInput, AgentState, Effect, Spend, ToolSuccess

from .._machine import Machine, MachineStopped, reraise_single
from .._store import child_session_id, session_exists
from .._tools import Toolbox
from ._agent_tool import CALLER_CANCELLED, AgentTool
from ._caller import Caller
from ._runtime import AgentRuntime


def _waiting(state: AgentState, tools: Mapping[str, AgentTool]) -> frozenset[str]:
    """The calls of agent tools that wait for a decision taken below them."""
    turn = state.turn
    if turn is None or not turn.awaiting_ids:
        return frozenset()
    calls = state.tool_calls
    return frozenset(c for c in turn.awaiting_ids if calls[c].status == "awaiting-input" and calls[c].name in tools)


class LeftWaiting:
    """The children of one session left waiting by its closed calls, and the task that ends their turns.

    :meth:`note` is part of the machine's ``follow_up`` (it sees every batch, before and after, so no state is
    missed); :meth:`watching` runs around ``machine.running()``.
    """

    def __init__(self, toolbox: Toolbox, runtime: AgentRuntime) -> None:
        self._tools = {tool.name: tool for tool in toolbox if isinstance(tool, AgentTool)}
        self._runtime = runtime
        self._closed: list[str] = []
        self._ending = anyio.Lock()

    def note(self, before: AgentState, after: AgentState) -> None:
        """Keep the calls that waited in ``before`` and were closed in ``after`` without running again."""
        if not self._tools or before.turn is None or not before.turn.awaiting_ids:
            return
        calls = after.tool_calls
        for call_id in sorted(_waiting(before, self._tools) - _waiting(after, self._tools)):
            if calls[call_id].status not in ("pending", "running"):  # decided: its tool goes on with the child
                self._closed.append(call_id)

    @asynccontextmanager
    async def watching(self, machine: Machine[AgentState, AgentInput, Effect]) -> AsyncIterator[Callable[[], object]]:
        """Around ``machine.running()``: yields the function that starts the watch once the machine runs; after
        the block (the machine stopped: its last inputs applied), ends what is still left."""
        if not self._tools:
            yield lambda: None
            return
        self._closed.extend(await self._left_by_last_turn(machine.current()))
        try:
            async with anyio.create_task_group() as group:
                yield lambda: group.start_soon(self._watch, machine)
                group.cancel_scope.cancel()
        except BaseExceptionGroup as errors:  # the block's error, as the machine raised it
            reraise_single(errors)
        await self.end(machine)

    async def _left_by_last_turn(self, state: AgentState) -> list[str]:
        """In a stored session reopened after its turn ended other than by an answer: the calls of agent tools
        of that turn that did not answer and have a child, which may have been left waiting for a decision or
        running (the process stopped before it ended them). Ending a child whose turn ended already changes
        nothing. Whether a child was made is asked of the store off the event loop."""
        outcome, store = state.last_outcome, self._runtime.store
        if store is None or state.turn is not None or outcome is None or outcome.kind == "completed":
            return []
        own = self._runtime.stored_id or state.session_id
        log, calls, unanswered = state.tool_call_log, state.tool_calls, []
        for i in range(len(log) - 1, -1, -1):
            record = calls.get(log[i])
            if record is None or record.turn != outcome.turn:
                break
            if record.name in self._tools and not isinstance(record.result, ToolSuccess):  # its child did not answer
                unanswered.append((log[i], record.input_rounds > 0))  # asked a question: it has a child
        if not unanswered:
            return []

        def made_a_child() -> list[str]:
            return [c for c, asked in unanswered if asked or session_exists(store, child_session_id(own, c))]

        return await anyio.to_thread.run_sync(made_a_child)

    async def _watch(self, machine: Machine[AgentState, AgentInput, Effect]) -> None:
        while True:
            try:  # once durable: the close is in this session's log before its children's turns end
                await machine.until(lambda _: bool(self._closed))
            except (MachineStopped, RuntimeError):  # stopped: what is left is ended then
                return
            await self.end(machine)

    async def end(self, machine: Machine[AgentState, AgentInput, Effect]) -> None:
        """End the turns of the children left waiting so far (each whole, even while the session stops);
        returns once they, and any being ended meanwhile, are."""
        with anyio.CancelScope(shield=True):
            async with self._ending:
                while self._closed:
                    call_id, state = self._closed.pop(0), machine.current()
                    tool = self._tools[state.tool_calls[call_id].name]
                    await tool.cancel_child(self._caller(state, machine), call_id, CALLER_CANCELLED)

    def _caller(self, state: AgentState, machine: Machine[AgentState, AgentInput, Effect]) -> Caller:
        """This session as the caller of the child it ends (it reports nothing: the call is closed)."""
        lineage = state.config.lineage
        own = self._runtime.stored_id or state.session_id

        async def report(_: Spend) -> bool:
            return False

        return Caller(
            own,
            lineage.root_session_id if lineage else own,
            self._runtime.store,
            lambda: True,
            report,
            budget_pool=state.config.budget_pool,
            pools=self._runtime.budget_pools,
            publish=machine.emit,
            depth=lineage.depth if lineage else 0,
        )
