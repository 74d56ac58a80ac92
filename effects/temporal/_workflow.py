"""``SessionWorkflow``: one agent session as a Temporal workflow (workflow id = session id).

Theory of operation. A run loads the session's state from the store (the
``open`` activity), then loops: reconcile ``effects_at`` with the running
effects, wait for inputs (from effects, or from outside through the ``submit``
Update), fold them with ``transition``, and append the accepted batch to the
log (the ``append`` activity, with the run's sequence number as the expected
length) before anything that depends on them starts. After
``continue_every`` inputs the run stops starting activities, lets those under
way finish and fold, and continues as new with only (session id, sequence
number): the next run reloads the state from the store's snapshot and tail,
and derives the effects to run from it again, timers included.

A call of an agent tool runs as a child workflow of this same workflow, for
the child session (workflow id = the child session's id): it folds its task
as its user message, runs that one turn, reports what it spends to its caller
by signal, and returns the call's inputs. A cancelled run ends its open turn
as cancelled in its log (its own effects and children cancelled) before it ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from msgspec import json as msgjson
    from msgspec.structs import replace as replace_struct

    from agent_core import (
        AgentInput,
        AgentState,
        ChildSpent,
        DecodeError,
        Phase,
        ReActCancelled,
        Rejection,
        Spend,
        ToolCallApproved,
        ToolCallCompleted,
        ToolCallDenied,
        ToolFailure,
        ToolSuccess,
        UserMessageReceived,
        check,
        decode_input,
        decode_state,
        effects_at,
        encode_input,
        initial_state,
        phase,
        spent,
        tag_of,
    )

    from .._agent import CALLER_CANCELLED, child_result
    from ._effects import WorkflowEffects, now_ms
    from ._pending import Folded, Pending, fold, stamped
    from ._wire import (
        APPEND,
        CHILD_SPENT,
        OPEN,
        REJECTED,
        WORKFLOW,
        Appended,
        Batch,
        Loaded,
        SessionArgs,
        SpendReport,
        Submitted,
    )

_T = TypeVar("_T")

STORE_TIMEOUT = timedelta(seconds=10)
"""How long a store activity may take before it is retried (on another worker if this one died meanwhile).

An append whose worker died after committing is retried and finds its batch there (see ``SessionLogs.append``).
"""

TASK_MESSAGE_ID = "task"
"""The id of a child session's user message: the task its caller's call gives it."""

NO_DECISIONS = (
    "a child session run by Temporal cannot pass a decision on one of its calls to its caller; expected the "
    "child agent's tools without approval, or the sessions run by Agent.running() / open_session()"
)
"""Why a child session that waits for a decision on one of its calls ends its turn under Temporal."""

WORKFLOW_CANCELLED = "the session's workflow was cancelled"
"""Why a session's open turn ended when its workflow (not a child's) was cancelled through Temporal."""

FROM_OUTSIDE = (UserMessageReceived, ToolCallApproved, ToolCallDenied, ReActCancelled)
"""The inputs ``submit`` accepts: what a person sends. Everything else comes from the session's own effects."""


async def _log_call(name: str, arg: object, result_type: type[_T]) -> _T:
    """Run a store activity: quick, retried (a store briefly down), and failing the workflow when it fails for good.

    A local activity, run by the worker that runs the workflow task: no task
    queue round trip through the server, and the journal it keeps is that
    worker's. Local activities may run again (a worker that died before the
    workflow task recorded the result): ``open`` only reads or creates a
    session once, and ``append`` finds a batch it already committed (see
    ``SessionLogs``), so running twice is safe.
    """
    result: _T = await workflow.execute_local_activity(
        name,
        arg,
        result_type=result_type,
        start_to_close_timeout=STORE_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=20, non_retryable_error_types=["ValueError", "LogDamaged"]),
    )
    return result


def rejected(rejection: Rejection) -> ApplicationError:
    """The error a refused input comes back as: its message, type :data:`REJECTED`, the Rejection as JSON detail."""
    return ApplicationError(str(rejection), msgjson.encode(rejection).decode(), type=REJECTED, non_retryable=True)


@workflow.defn(name=WORKFLOW)
class SessionWorkflow:
    """A session, run by whichever worker Temporal gives it to; its log in the store stays the source of truth."""

    def __init__(self) -> None:
        self._state = initial_state()
        self._checked = self._state  # what Updates are checked against: the newest folded state
        self._seq = 0
        self._ready = False
        self._ending = False
        self._effects: WorkflowEffects | None = None
        self._committing: asyncio.Future[None] | None = None
        self._reported = Spend()  # what this child last told its caller it spent
        self._signals: list[asyncio.Future[None]] = []

    @workflow.run
    async def run(self, args: SessionArgs) -> list[str]:
        """Run the session until ``continue_every`` inputs are folded, then continue as new.

        A child session (``args.agent``) gets its task as its user message, runs
        that one turn, and returns the call's inputs for its parent: what it
        spent (``child-spent``) and the call's ``tool-call-completed``. A
        cancelled run (its caller's call was closed) ends its open turn as
        cancelled, in its log, before it ends.
        """
        loaded = await _log_call(OPEN, args, Loaded)
        if loaded.refused:  # a child's arguments its agent tool refuses: no session, the call fails
            return [loaded.refused]
        self._state, self._seq = decode_state(loaded.state.encode(), format="json"), loaded.seq
        self._checked = self._state
        effects = self._effects = WorkflowEffects(args, loaded.children, lambda: self._state, lambda: self._seq)
        self._ready, first = True, self._seq
        if args.agent and args.seq == 0 and len(self._state.messages) == 0:
            task = UserMessageReceived(timestamp=now_ms(), message_id=TASK_MESSAGE_ID, content=loaded.task)
            effects.inbox.append(Pending(task))
        try:
            while True:
                if args.agent and _answered(self._state):
                    return await self._answer(args.agent, effects)
                effects.reconcile(effects_at(self._state), start=not self._ending)
                await workflow.wait_condition(lambda: bool(effects.inbox) or self._may_end(effects))
                if not effects.inbox:
                    break
                # Shielded: a cancellation arriving while a batch is appended lets the append finish (its outcome
                # known) before the turn is ended after it.
                self._committing = asyncio.ensure_future(self._commit(effects))
                await asyncio.shield(self._committing)
                if args.agent:
                    self._report_spent()
                self._ending = self._ending or self._seq - first >= args.continue_every
        except asyncio.CancelledError:
            await self._cancelled(effects, CALLER_CANCELLED if args.agent else WORKFLOW_CANCELLED)
            raise
        await self._signalled()
        workflow.continue_as_new(replace(args, seq=self._seq, config=""))

    def _report_spent(self) -> None:
        """Tell the caller's workflow (a signal) what this child has spent so far, when it changed: its budgets
        count it as it happens. The final total comes with the call's result as well."""
        lineage, now = self._state.config.lineage, spent(self._state)
        if lineage is None or now == self._reported:
            return
        self._reported = now
        report = SpendReport(lineage.parent_tool_call_id, msgjson.encode(now).decode())
        caller = workflow.get_external_workflow_handle(lineage.parent_session_id)
        self._signals.append(asyncio.ensure_future(caller.signal(CHILD_SPENT, report)))

    async def _answer(self, agent: str, effects: WorkflowEffects) -> list[str]:
        """The child's turn ended (or waits for a decision, which its caller cannot give under Temporal: the
        turn is then ended as cancelled, in its log): the call's inputs for the parent."""
        if self._state.turn is not None:
            await self._end_turn(effects, NO_DECISIONS)
        outcome = child_result(agent, self._state, workflow.info().workflow_id)
        if not isinstance(outcome, ToolSuccess | ToolFailure):  # a request for decisions: not once the turn ended
            outcome = ToolFailure(error=f"agent {agent!r} waits for a decision; {NO_DECISIONS}")
        lineage = self._state.config.lineage
        call_id = lineage.parent_tool_call_id if lineage is not None else ""
        await self._signalled()
        now = now_ms()
        answer = (
            ChildSpent(timestamp=now, tool_call_id=call_id, spent=spent(self._state)),
            ToolCallCompleted(timestamp=now, tool_call_id=call_id, result=outcome),
        )
        return [encode_input(inp, format="json").decode() for inp in answer]

    async def _signalled(self) -> None:
        """Wait for the spend reports sent; one that failed (the caller's workflow ended) is logged: the call's
        result carries the final total anyway."""
        for sent in self._signals:
            try:
                await sent
            except Exception as error:  # an ApplicationError or a Temporal failure: said, not raised
                workflow.logger.warning("a spend report to the caller failed: %s", error)
        self._signals.clear()

    async def _cancelled(self, effects: WorkflowEffects, reason: str) -> None:
        """The run was cancelled (the call running this child was closed, or someone cancelled the workflow):
        end the open turn as cancelled for ``reason``, in the log, and wait for the effects that ends (activities,
        child sessions: each ends its own turn) to stop."""
        if self._committing is not None and not self._committing.done():
            await self._committing
        if self._ready and self._state.turn is not None:
            await self._end_turn(effects, reason)

    async def _end_turn(self, effects: WorkflowEffects, reason: str) -> None:
        effects.inbox.append(Pending(ReActCancelled(timestamp=now_ms(), reason=reason)))
        await self._commit(effects)
        effects.reconcile(effects_at(self._state), start=False)
        await workflow.wait_condition(lambda: not effects.activities_running())

    def _may_end(self, effects: WorkflowEffects) -> bool:
        return self._ending and not effects.activities_running() and workflow.all_handlers_finished()

    async def _commit(self, effects: WorkflowEffects) -> None:
        batch, effects.inbox = effects.inbox, []
        folded = fold(self._state, batch, effects.cancelled)
        effects.check_refused(batch, effects_at(folded.state))
        if not folded.accepted:
            return
        # From now on Updates are checked against the batch's state: an outside reader of the log may see it
        # before the append activity's answer reaches this run.
        self._checked = folded.state
        appended = await self._append(folded)
        if appended.logged:  # an earlier attempt of this workflow task wrote the batch's first inputs: adopt them
            for item, logged in zip(folded.accepted, appended.logged, strict=False):
                item.inp = decode_input(logged.encode(), format="json")
            folded = fold(self._state, folded.accepted, set())
            self._checked = folded.state
            appended = await self._append(folded)
            if appended.logged:
                raise ApplicationError(
                    f"session {workflow.info().workflow_id!r}: the log's records after {self._seq} changed while "
                    "this run adopted them; another writer appended to it (run each session in one place only)",
                    non_retryable=True,
                )
        for n, item in enumerate(folded.accepted, start=self._seq + 1):
            item.seq, item.done = n, True
        self._state, self._seq = folded.state, self._seq + len(folded.accepted)

    async def _append(self, folded: Folded) -> Appended:
        data = [encode_input(item.inp, format="json").decode() for item in folded.accepted]
        return await _log_call(APPEND, Batch(workflow.info().workflow_id, self._seq, data), Appended)

    @workflow.update(name="submit")
    async def submit(self, data: str) -> Submitted:
        """Apply an input from outside; returns once it is in the log. A refused one fails with the Rejection.

        A user message the log already holds, with the same id and text, is not applied again: it is the same
        message delivered again (a workflow task that appended it was lost and the run reloaded the log, or an
        aborted Update was sent again), and its seq is returned once it is in the log (see ``applied_already``).
        """
        await workflow.wait_condition(lambda: self._ready)
        assert self._effects is not None
        inp = _outside(data)
        logged = applied_already(self._checked, inp)
        if logged is not None:
            await workflow.wait_condition(lambda: self._seq >= logged)
            return Submitted(seq=logged)
        item = Pending(replace_timestamp(inp))
        self._effects.inbox.append(item)
        await workflow.wait_condition(lambda: item.done)
        if item.rejection is not None:
            raise rejected(item.rejection)
        return Submitted(seq=item.seq)

    @submit.validator
    def validate(self, data: str) -> None:
        """Refuse, before anything is recorded, what ``check`` refuses in the current state."""
        inp = _outside(data)
        # Before the run loaded the state (an Update racing the start), the handler checks at fold time instead.
        state = self._checked
        if not self._ready or applied_already(state, inp) is not None:
            return
        refused = check(state, stamped(replace_timestamp(inp), state))
        if refused is not None:
            raise rejected(refused)

    @workflow.update(name="opened")
    async def opened(self) -> Submitted:
        """Return once the run has loaded the session (from then on ``submit``'s validator sees its state)."""
        await workflow.wait_condition(lambda: self._ready)
        return Submitted(seq=self._seq)

    @workflow.signal(name=CHILD_SPENT)
    def child_spent(self, report: SpendReport) -> None:
        """A child session run by one of this session's calls reports what it has spent so far."""
        if self._effects is not None:
            self._effects.child_spent(report)

    @workflow.query(name="seq")
    def committed(self) -> int:
        """How many records the session's log has, as far as this run committed."""
        return self._seq


def replace_timestamp(inp: AgentInput) -> AgentInput:
    """The input stamped by the workflow's clock (the caller's clock is not the session's)."""
    return replace_struct(inp, timestamp=now_ms())


def applied_already(state: AgentState, inp: AgentInput) -> int | None:
    """The seq of ``inp`` when it is a user message ``state`` already holds with the same id and text (applied,
    or queued behind the running turn); ``None`` for any other input. A message that waited in the queue and
    has since joined the conversation carries the seq at which it joined (the input that ended the turn before
    it), later than its own: still a point of the log at which it is there."""
    if not isinstance(inp, UserMessageReceived):
        return None
    position = state.message_index.get(inp.message_id)
    found = (
        state.messages[position]
        if position is not None
        else next((m for m in state.queued if m.id == inp.message_id), None)
    )
    if found is None or found.role != "user" or found.content != inp.content:
        return None
    return found.seq


def _outside(data: str) -> AgentInput:
    try:
        inp = decode_input(data.encode(), format="json")
    except DecodeError as error:
        raise ApplicationError(f"expected one agent-core input as JSON, got: {error}", non_retryable=True) from None
    if not isinstance(inp, FROM_OUTSIDE):
        kinds = ", ".join(str(k.__struct_config__.tag) for k in FROM_OUTSIDE)
        raise ApplicationError(
            f"submit accepts {kinds}; got {tag_of(inp)!r}, which only the session's effects produce", non_retryable=True
        )
    return inp


def _answered(state: AgentState) -> bool:
    """Whether a child session's turn is over: its task is in, and its turn ended or waits for a decision."""
    return len(state.messages) > 0 and (state.turn is None or phase(state) is Phase.AWAITING_APPROVAL)
