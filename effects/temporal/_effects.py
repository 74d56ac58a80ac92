"""The workflow's effects: ``call-llm`` and ``call-tool`` as activities keyed by effect key (a call of an agent
tool as a child workflow), ``wait-until`` as timers.

:class:`WorkflowEffects` reconciles like the machine does: a key that appears
starts its effect, a key that disappears cancels it, and a cancelled effect's
later inputs are dropped. Effects feed their inputs to the workflow's inbox.
A pending tool call is started in the log (``tool-call-started`` committed)
before its activity is scheduled, so after any crash the log tells whether it
may have run. An activity that fails for good (its worker died and the tool is
not idempotent, or its retries ran out) becomes a failure the model sees.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any, assert_never

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    import msgspec
    from msgspec import json as msgjson
    from msgspec.structs import replace as replace_struct

    from agent_core import (
        AgentConfig,
        AgentInput,
        AgentState,
        CallLlm,
        CallTool,
        ChildSpent,
        Effect,
        Lineage,
        LlmCallFailed,
        Spend,
        TimerFired,
        ToolCallCompleted,
        ToolCallStarted,
        ToolFailure,
        WaitUntil,
        active_tools,
        decode_input,
    )

    from .._agent import INTERRUPTED, too_deep
    from .._machine import reconcile, stuck_effect
    from .._store import child_session_id
    from .._tools import timed_out
    from ._pending import Pending
    from ._wire import CALL_LLM, CALL_TOOL, WORKFLOW, ChildAgent, EffectRef, SessionArgs, SpendReport, ToolCall

_CONFIG = msgjson.Decoder(AgentConfig)
_SPEND = msgjson.Decoder(Spend)

RUN_TIMEOUT = timedelta(hours=1)
"""The longest a model or tool activity may run; a dead worker is found sooner, by its missed heartbeats."""


def now_ms() -> int:
    """The workflow's deterministic clock, in ms since the epoch."""
    return workflow.time_ns() // 1_000_000


class WorkflowEffects:
    """The running effects of one workflow run, by key. ``state()`` is the committed state, ``seq()`` its record."""

    def __init__(
        self,
        args: SessionArgs,
        children: dict[str, ChildAgent],
        state: Callable[[], AgentState],
        seq: Callable[[], int],
    ) -> None:
        self.inbox: list[Pending] = []
        self.cancelled: set[int] = set()
        self._args = args
        self._children = children
        self._session_id = args.session_id
        self._heartbeat = timedelta(milliseconds=args.heartbeat_ms)
        self._state, self._seq = state, seq
        self._running: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self._tokens = 0
        self._children_running: dict[str, int] = {}  # the token of each call running a child, by tool call id

    def reconcile(self, wanted: dict[str, Effect], *, start: bool) -> None:
        """Cancel what is no longer wanted; start what is new (unless ``start`` is false: the run is ending).

        As the machine's reconciliation (:func:`effects.reconcile`), except that
        an effect that finished, its inputs folded, starts again while its key
        is still derived: a workflow run is replayed from its history, not resumed.
        """
        waiting = {item.token for item in self.inbox}
        for key, (token, task) in list(self._running.items()):
            if key in wanted and task.done() and token not in waiting:
                del self._running[key]
        plan = reconcile(self._running, wanted)
        for key in plan.cancel:
            token, task = self._running.pop(key)
            self.cancelled.add(token)
            task.cancel()
        if start:
            for key in plan.start:
                self._tokens += 1
                self._running[key] = (self._tokens, asyncio.create_task(self._run(key, wanted[key], self._tokens)))

    def check_refused(self, batch: list[Pending], wanted: dict[str, Effect]) -> None:
        """Fail the run if an effect's input was refused while the state still derives that effect.

        The effect would only run again and be refused again: a bug in the
        effect or the reducer, made visible (the machine's :class:`~effects.EffectInputRefused`).
        A refused input of an effect no longer derived is a late result: logged, dropped.
        """
        keys = {token: key for key, (token, _) in self._running.items()}
        refused = [item for item in batch if item.token and item.rejection is not None]
        for item in refused:
            workflow.logger.warning(
                "session %s: effect %r produced a refused input: %s",
                self._session_id,
                keys.get(item.token, ""),
                item.rejection,
            )
        origins = {id(item.inp): keys.get(item.token) for item in refused}
        stuck = stuck_effect([(item.inp, item.rejection) for item in refused], lambda inp: origins[id(inp)], wanted)
        if stuck is not None:
            raise ApplicationError(f"session {self._session_id!r}: {stuck}", non_retryable=True)

    def activities_running(self) -> bool:
        """Whether a model or tool call (an activity, or a child session's workflow) is under way (timers do not
        count: a new run derives them again)."""
        return any(not t.done() and not k.startswith("wait-until") for k, (_, t) in self._running.items())

    async def _run(self, key: str, eff: Effect, token: int) -> None:
        if isinstance(eff, WaitUntil):
            await workflow.sleep(max(0.0, (eff.at - now_ms()) / 1000))
            self._push(TimerFired(timestamp=max(now_ms(), eff.at)), token)
        elif isinstance(eff, CallLlm):
            ref = EffectRef(self._session_id, self._seq(), key, self._args.agent)
            await self._activity(CALL_LLM, ref, key, token, 3, _llm_failed)
        elif isinstance(eff, CallTool):
            await self._call_tool(key, eff, token)
        else:
            assert_never(eff)

    async def _call_tool(self, key: str, eff: CallTool, token: int) -> None:
        state = self._state()
        record = state.tool_calls.get(eff.tool_call_id)
        if record is not None and record.status == "pending":
            started = self._push(ToolCallStarted(timestamp=now_ms(), tool_call_id=eff.tool_call_id), token)
            await workflow.wait_condition(lambda: started.done)
            if started.rejection is not None or not started.seq:
                return  # refused: the call is no longer pending, so it must not run
        child = self._children.get(eff.name)
        if child is not None:
            await self._call_child(eff, child, token)
            return
        tool = active_tools(state).get(eff.name)
        idempotent = tool is not None and tool.idempotent
        failed = _tool_failed(eff.tool_call_id, idempotent)
        # Handed the call itself: the activity reads nothing from the store before the tool runs, so its failure
        # means the tool may have run (a store outage cannot fail it first).
        floor = self._state().timestamp
        call = ToolCall(self._session_id, key, eff.tool_call_id, eff.name, eff.parameters, floor, self._args.agent)
        await self._activity(CALL_TOOL, call, key, token, 3 if idempotent else 1, failed)

    async def _call_child(self, eff: CallTool, child: ChildAgent, token: int) -> None:
        """Run the call of an agent tool as a child workflow: the child session's, whose id is derived from this
        session's and the call's (:func:`~effects.child_session_id`).

        Its result is what the child spent (``child-spent``) and the call's
        ``tool-call-completed``. The same id never runs twice at once: a run of
        this workflow waits for its children before it continues as new, and a
        closed one (this workflow's earlier run) is started again, which reopens
        the child's log and answers from it (its turn resumed, or ended already).
        A child whose workflow failed gives the call a failure the model reads.
        """
        lineage = self._state().config.lineage
        depth = lineage.depth if lineage is not None else 0
        root = lineage.root_session_id if lineage is not None else self._session_id
        deep = too_deep(eff.name, eff.tool_call_id, depth, root, child.max_depth or None)
        if deep is not None:
            self._push(ToolCallCompleted(timestamp=now_ms(), tool_call_id=eff.tool_call_id, result=deep), token)
            return
        child_id = child_session_id(self._session_id, eff.tool_call_id)
        below = Lineage(
            parent_session_id=self._session_id,
            parent_tool_call_id=eff.tool_call_id,
            root_session_id=root,
            depth=depth + 1,
        )
        config = msgjson.encode(replace_struct(_CONFIG.decode(child.config), lineage=below)).decode()
        args = replace(self._args, session_id=child_id, seq=0, config=config, agent=eff.name, arguments=eff.parameters)
        self._children_running[eff.tool_call_id] = token
        running = asyncio.ensure_future(
            workflow.execute_child_workflow(WORKFLOW, args, id=child_id, result_type=list[str])
        )
        try:
            await workflow.wait_condition(running.done, timeout=child.timeout_ms / 1000 if child.timeout_ms else None)
            results = running.result()
        except TimeoutError:  # out of time: the child ends its turn as cancelled, in its log, then the call fails
            await _cancel(running)
            tool = active_tools(self._state()).get(eff.name)
            message = timed_out(eff.name, eff.tool_call_id, child.timeout_ms, tool is not None and tool.idempotent)
            failure = ToolFailure(error=message, code="timeout")
            self._push(ToolCallCompleted(timestamp=now_ms(), tool_call_id=eff.tool_call_id, result=failure), token)
            return
        except asyncio.CancelledError:  # the call was closed: its child ends its turn before this effect ends
            await _cancel(running)
            raise
        except (ChildWorkflowError, WorkflowAlreadyStartedError) as error:
            cause = _cause(error) if isinstance(error, ChildWorkflowError) else "its workflow runs already"
            failure = ToolFailure(error=f"agent {eff.name!r} (child session {child_id!r}) failed: {cause}")
            self._push(ToolCallCompleted(timestamp=now_ms(), tool_call_id=eff.tool_call_id, result=failure), token)
            return
        finally:
            del self._children_running[eff.tool_call_id]
        for data in results:
            self._push(decode_input(data.encode(), format="json"), token)

    async def _activity(
        self,
        name: str,
        arg: EffectRef | ToolCall,
        key: str,
        token: int,
        attempts: int,
        failed: Callable[[ActivityError], AgentInput],
    ) -> None:
        try:
            results: list[str] = await workflow.execute_activity(
                name,
                arg,
                result_type=list[str],
                activity_id=key,
                start_to_close_timeout=RUN_TIMEOUT,
                heartbeat_timeout=self._heartbeat,
                retry_policy=RetryPolicy(maximum_attempts=attempts),
            )
        except ActivityError as error:
            self._push(failed(error), token)
            return
        for data in results:
            self._push(decode_input(data.encode(), format="json"), token)

    def child_spent(self, report: SpendReport) -> None:
        """A running child's report of what it spent so far: a ``child-spent`` of its call (a report of a call
        no longer running is dropped; one that cannot be read is logged and dropped)."""
        token = self._children_running.get(report.tool_call_id)
        if token is None:
            return
        try:
            amount = _SPEND.decode(report.spent)
        except msgspec.DecodeError as error:
            workflow.logger.warning("session %s: a child's spend report is not a Spend: %s", self._session_id, error)
            return
        self._push(ChildSpent(timestamp=now_ms(), tool_call_id=report.tool_call_id, spent=amount), token)

    def _push(self, inp: AgentInput, token: int) -> Pending:
        item = Pending(inp, token)
        self.inbox.append(item)
        return item


async def _cancel(running: asyncio.Future[list[str]]) -> None:
    """Cancel a child workflow and wait until it ended (it ends its open turn in its log first)."""
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, ChildWorkflowError):  # how a cancelled child ends
        await running


def _cause(error: ActivityError | ChildWorkflowError) -> str:
    cause: Any = error.cause
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(error)


def _llm_failed(error: ActivityError) -> AgentInput:
    return LlmCallFailed(
        timestamp=now_ms(), error=f"the model call failed on its worker: {_cause(error)}", retryable=False
    )


def _tool_failed(tool_call_id: str, idempotent: bool) -> Callable[[ActivityError], AgentInput]:
    def failed(error: ActivityError) -> AgentInput:
        text = f"the tool call failed on its worker: {_cause(error)}" if idempotent else INTERRUPTED
        return ToolCallCompleted(timestamp=now_ms(), tool_call_id=tool_call_id, result=ToolFailure(error=text))

    return failed
