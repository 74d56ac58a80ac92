"""Resuming a stored session: complete what was interrupted, then let the state restart the rest."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from agent_core import AgentConfig, AgentState, ToolCallCompleted, ToolFailure

from .._clock import Clock, SystemClock
from .._machine import DEFAULT_MAX_BACKLOG
from .._model import Model
from .._store import (
    DEFAULT_SNAPSHOT_EVERY,
    Durability,
    EventStore,
    Lease,
    SessionJournal,
    leasing,
    session_exists,
)
from .._tools import Tool
from ._ids import IdSource
from ._output import OutputType
from ._session import Agent
from ._session_handle import Session

INTERRUPTED = "interrupted by a restart; not re-run, outcome unknown"
"""The failure a non-idempotent tool call gets when the process died while it ran."""


def interrupted_calls(state: AgentState) -> list[str]:
    """Ids of the tool calls that were running (started, not completed) and must not run again.

    Those of tools declared ``idempotent`` are not listed: they simply run
    again on resume, with the same tool call id as their idempotency key. Nor
    are calls that follow a remote task (``tool-call-task-created``): they
    follow it again by its id, and the call is never sent twice.
    """
    turn = state.turn
    if turn is None:
        return []
    calls, tools = state.tool_calls, state.tools
    interrupted = []
    for call_id in turn.open_call_ids:
        record = calls[call_id]
        tool = tools.get(record.name)
        if record.status == "running" and not record.task_id and not (tool is not None and tool.idempotent):
            interrupted.append(call_id)
    return interrupted


def complete_interrupted(journal: SessionJournal, now_ms: int) -> list[str]:
    """Log a failure result (:data:`INTERRUPTED`) for every call of :func:`interrupted_calls`, as one batch.

    The model sees the failure and decides what to do; the tool does not run
    twice. Returns the completed ids.
    """
    state = journal.state
    call_ids = interrupted_calls(state)
    timestamp = max(now_ms, state.timestamp)
    failure = ToolFailure(error=INTERRUPTED)
    journal.append([ToolCallCompleted(timestamp=timestamp, tool_call_id=i, result=failure) for i in call_ids])
    return call_ids


@asynccontextmanager
async def open_session(
    store: EventStore,
    session_id: str,
    model: Model,
    *,
    tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (),
    config: AgentConfig | None = None,
    clock: Clock | None = None,
    ids: IdSource | None = None,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    durability: Durability = "input",
    max_backlog: int | None = DEFAULT_MAX_BACKLOG,
    secrets: Iterable[str] = (),
    output_type: OutputType | None = None,
) -> AsyncIterator[Session]:
    """Run a durable agent session stored under ``session_id``: a new one, or the stored one resumed.

    One writer per session: the session's lease is taken in ``store`` first
    (:class:`~effects.SqliteStore`, :class:`~effects.PostgresStore`,
    :class:`~effects.MemoryStore`; renewed by the store while the block runs,
    given back on exit). While another writer holds it, this raises
    :class:`~effects.SessionLeased` naming the holder and when its lease
    expires; a lease that expired (its writer stopped renewing it), or whose
    holder is a process of this machine that no longer exists, is taken over.
    Every append carries the lease: should another writer take the session
    over (this process stalled for longer than the lease), the store refuses
    this one's next commit with ``SessionLeased`` and the session stops with it.

    Every input is committed to ``store`` before anything depends on it. On
    resume the log is folded (newest snapshot and tail), interrupted
    non-idempotent tool calls are completed with a failure
    (:func:`complete_interrupted`: only now that the lease shows their writer
    gone), and the effects the state derives start again: the model call,
    idempotent tools that were running, pending tools. ``config`` applies to
    a new session only; a stored session keeps the configuration its log
    started with. On exit a snapshot is saved.

    ``durability="turn"`` commits when a turn ends or waits for a person
    instead (see :class:`SessionJournal`): faster, and a crash loses at most
    the turn in progress (its tools may then run again when it is asked again).
    ``max_backlog`` bounds the inputs from outside waiting for the store (see
    :class:`Agent`). ``secrets`` are redacted from every input (see :class:`Agent`);
    they are not stored, so pass them each time. ``output_type`` asks for a structured answer (see
    :class:`Agent`); a stored session keeps the schema its log started with, and its answers are validated by
    ``output_type`` when that gives the same schema, else against the logged schema.
    """
    clock = clock if clock is not None else SystemClock()
    keeper = leasing(store)
    lease = None if keeper is None else await anyio.to_thread.run_sync(keeper.acquire_lease, session_id)
    try:
        journal = _journal(store, session_id, clock, snapshot_every, durability, lease)
        agent = Agent(
            model,
            tools=tools,
            config=config if journal.seq == 0 else None,
            clock=clock,
            ids=ids,
            session_id=session_id,
            journal=journal,
            initial=journal.state if journal.seq else None,
            max_backlog=max_backlog,
            secrets=secrets,
            output_type=output_type,
        )
        try:
            async with agent.running() as session:
                yield session
        finally:
            with anyio.CancelScope(shield=True):  # the final commit and snapshot, without blocking the event loop
                await anyio.to_thread.run_sync(journal.close)
    finally:
        if keeper is not None and lease is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(keeper.release_lease, lease)


def _journal(
    store: EventStore,
    session_id: str,
    clock: Clock,
    snapshot_every: int,
    durability: Durability,
    lease: Lease | None,
) -> SessionJournal:
    """The session's journal: the stored session loaded, its interrupted calls completed; or a new one."""
    if not session_exists(store, session_id):
        return SessionJournal(store, session_id, snapshot_every=snapshot_every, durability=durability, lease=lease)
    journal = SessionJournal.open(store, session_id, snapshot_every=snapshot_every, durability=durability, lease=lease)
    complete_interrupted(journal, clock.now_ms())
    return journal
