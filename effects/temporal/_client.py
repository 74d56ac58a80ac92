"""The caller's side: start a session's workflow, submit inputs to it, wait for its turn to end."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import timedelta
from functools import partial

from msgspec import json as msgjson
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from agent_core import AgentConfig, AgentInput, AgentState, InvalidInput, Phase, Rejection, encode_input, phase

from .._agent import Redactor
from .._store import DEFAULT_RECONNECT_FOR, Position, PostgresStore, fold, load_position
from ._wire import REJECTED, TASK_QUEUE, WORKFLOW, SessionArgs, Submitted

ABORTED_ATTEMPTS = 5
"""How often :func:`submit` sends an Update the server aborted (it lost the workflow's Update registry: a
workflow task that timed out on a loaded worker, the workflow evicted from its cache) before it gives up."""


async def start_session(
    client: Client,
    session_id: str,
    *,
    config: AgentConfig | None = None,
    task_queue: str = TASK_QUEUE,
    continue_every: int = 200,
    heartbeat_ms: int = 10_000,
    rpc_timeout: timedelta | None = None,
) -> WorkflowHandle[object, None]:
    """Start the workflow of ``session_id`` (a new session with ``config``, or a stored one adopted).

    Returns once the workflow has loaded the session, so inputs submitted next
    are checked before they are accepted. If the session's workflow is running
    already, returns its handle: the workflow id is the session id, so a
    session never has two writers.

    ``rpc_timeout`` bounds each of its two calls to the server (start, then
    wait until loaded: with no worker on ``task_queue`` the second waits that
    long, then raises ``WorkflowUpdateRPCTimeoutOrCancelledError``); the call
    ends through the SDK, nothing is left running.
    """
    args = _session_args(session_id, config, continue_every, heartbeat_ms)
    handle: WorkflowHandle[object, None] = await client.start_workflow(
        WORKFLOW,
        args,
        id=session_id,
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        rpc_timeout=rpc_timeout,
    )
    await handle.execute_update("opened", result_type=Submitted, rpc_timeout=rpc_timeout)
    return handle


def _session_args(session_id: str, config: AgentConfig | None, continue_every: int, heartbeat_ms: int) -> SessionArgs:
    if config is not None and (config.handoffs or config.agents):
        # A worker's activities know one model and one agent's tools: a handoff would answer with the wrong ones.
        raise ValueError(
            f"session {session_id!r}: handoffs between agents ({config.agent_name!r} and "
            f"{', '.join(repr(p.name) for p in config.agents)}) do not run under Temporal yet; expected a config "
            "without handoffs, or the session run by Agent.running() / open_session()"
        )
    return SessionArgs(
        session_id,
        config=msgjson.encode(config).decode() if config is not None else "",
        continue_every=continue_every,
        heartbeat_ms=heartbeat_ms,
    )


async def submit(
    client: Client,
    session_id: str,
    inp: AgentInput,
    *,
    secrets: Iterable[str] = (),
    rpc_timeout: timedelta | None = None,
    start: bool = False,
    config: AgentConfig | None = None,
    task_queue: str = TASK_QUEUE,
    continue_every: int = 200,
    heartbeat_ms: int = 10_000,
) -> int:
    """Send ``inp`` (a user message, an approval, a denial, a cancellation) to the session; returns its seq.

    ``start=True`` also starts the session's workflow (as :func:`start_session`
    with ``config``, ``task_queue``, ``continue_every`` and ``heartbeat_ms``)
    when it is not running, in the same call to the server (update-with-start):
    one round trip where ``start_session`` then ``submit`` take three. An input
    that reaches a run before it loaded the session is checked when it is folded,
    and refused the same way.

    ``secrets`` in its text are replaced by ``[redacted]`` here, before the
    input enters the workflow's history or the log (as ``Agent(secrets=...)``
    does for a local session).

    The workflow stamps it with its own clock. An input the session's state
    refuses raises :class:`~agent_core.InvalidInput` carrying the
    :class:`~agent_core.Rejection`, exactly as the reducer would refuse it.
    ``rpc_timeout`` bounds the wait for the workers (then
    ``WorkflowUpdateRPCTimeoutOrCancelledError``, the input possibly still applied later).
    """
    data = encode_input(Redactor(secrets).input(inp), format="json").decode()
    update_id = str(uuid.uuid4())  # the same on every attempt: the server applies an Update once per id
    for attempt in range(ABORTED_ATTEMPTS):
        try:
            return await _submit_once(
                client,
                session_id,
                data,
                update_id,
                start,
                config,
                task_queue,
                continue_every,
                heartbeat_ms,
                rpc_timeout,
            )
        except RPCError as error:
            aborted = error.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.ABORTED) and "aborted" in error.message
            if not aborted or attempt == ABORTED_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


async def _submit_once(
    client: Client,
    session_id: str,
    data: str,
    update_id: str,
    start: bool,
    config: AgentConfig | None,
    task_queue: str,
    continue_every: int,
    heartbeat_ms: int,
    rpc_timeout: timedelta | None,
) -> int:
    try:
        done: Submitted
        if start:
            operation: WithStartWorkflowOperation[object, None] = WithStartWorkflowOperation(
                WORKFLOW,
                _session_args(session_id, config, continue_every, heartbeat_ms),
                id=session_id,
                task_queue=task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            try:
                done = await client.execute_update_with_start_workflow(
                    "submit",
                    data,
                    start_workflow_operation=operation,
                    id=update_id,
                    result_type=Submitted,
                    rpc_timeout=rpc_timeout,
                )
            finally:
                _settle(operation)
        else:
            handle = client.get_workflow_handle(session_id)
            done = await handle.execute_update(
                "submit", data, id=update_id, result_type=Submitted, rpc_timeout=rpc_timeout
            )
    except WorkflowUpdateFailedError as failed:
        cause = failed.cause
        if isinstance(cause, ApplicationError) and cause.type == REJECTED and cause.details:
            raise InvalidInput(msgjson.decode(str(cause.details[0]), type=Rejection)) from None
        raise
    return done.seq


async def turn_done(
    store: PostgresStore, session_id: str, after: int = 0, *, reconnect_for: float = DEFAULT_RECONNECT_FOR
) -> AgentState:
    """Wait until the session's state, from record ``after`` on, is settled: no open turn (it ended, or was
    cancelled) or a turn awaiting approval; returns that state.

    Returns at once when the state after record ``after`` is settled already
    (``after`` a cancellation, or a message to a session awaiting approval).
    Reads the log in ``store`` (waking on its notifications, not polling), so
    it works whichever worker runs the session and across continue-as-new.
    Every read runs on a worker thread, and only the records new since the
    last wake are read and folded. A store restart is waited out (as
    :meth:`~effects.PostgresStore.wait_for_inputs` does); a store unreachable
    for ``reconnect_for`` seconds raises :class:`~effects.StoreUnavailable`.
    """
    async with store.listen(reconnect_for=reconnect_for) as listener:  # one listening connection for all the waits
        length = await listener.wait_for_inputs(session_id, max(after - 1, 0))  # record `after` is there
        position = await listener.read(session_id, lambda: load_position(store, session_id, length)[0])
        while not _settled(position.state):
            length = await listener.wait_for_inputs(session_id, position.seq)
            position = await listener.read(session_id, partial(_fold, store, session_id, position, length))
        return position.state


def _settle(operation: WithStartWorkflowOperation[object, None]) -> None:
    """Take the start's outcome from the operation, so a start that failed is reported once, by the Update's error
    (not again, as a future nobody read, when the interpreter collects it)."""
    started = operation._workflow_handle  # the SDK offers no other way to look without awaiting
    if started.done() and not started.cancelled():
        started.exception()


def _settled(state: AgentState) -> bool:
    return state.turn is None or phase(state) is Phase.AWAITING_APPROVAL


def _fold(store: PostgresStore, session_id: str, at: Position, length: int) -> Position:
    """``at`` moved on to record ``length``: the new records read and folded (their hash chain checked)."""
    return fold(session_id, store.read(session_id, at.seq + 1, length), at, length)
