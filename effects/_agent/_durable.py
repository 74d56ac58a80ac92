"""A stored session's log opened for writing: its lease taken, its journal loaded, its interrupted calls
completed; or a new session's journal."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio

from agent_core import AgentState, ToolCallCompleted, ToolFailure, active_tools

from .._clock import Clock
from .._store import (
    DEFAULT_SNAPSHOT_EVERY,
    Durability,
    EventStore,
    Lease,
    SessionJournal,
    leasing,
    session_exists,
)

T = TypeVar("T")

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
    calls, tools = state.tool_calls, active_tools(state)  # the active agent's, after a handoff
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
async def durable_journal(
    store: EventStore,
    session_id: str,
    clock: Clock,
    *,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    durability: Durability = "input",
    interrupted: bool = True,
) -> AsyncIterator[SessionJournal]:
    """The journal of ``session_id`` in ``store`` under the session's lease, for the duration of the block
    (see :func:`open_session`): on exit the journal is closed (its last commit and a snapshot) and the lease
    given back. With ``interrupted=False`` the calls a crash interrupted are left as they are (for a caller
    that ends the turn, which closes them with its own reason)."""
    keeper = leasing(store)
    lease: Lease | None = None
    if keeper is not None:
        lease = await _made(functools.partial(keeper.acquire_lease, session_id), keeper.release_lease)
    try:  # loading a long log folds it: off the event loop
        journal = await _made(
            lambda: _journal(store, session_id, clock, snapshot_every, durability, lease, interrupted),
            SessionJournal.close,
        )
        try:
            yield journal
        finally:
            await _to_the_end(journal.close)  # the final commit and snapshot, without blocking the event loop
    finally:
        if keeper is not None and lease is not None:
            await _to_the_end(lambda: keeper.release_lease(lease))


async def _made(make: Callable[[], T], undo: Callable[[T], None]) -> T:
    """What ``make()`` returns, made in a worker thread (a lease taken, a journal opened). A wait cancelled
    meanwhile (by a scope, or by a runner's own cancel of the task) never leaves it behind: what the thread made,
    or makes after, is undone with ``undo``."""
    made: list[T] = []
    guard = threading.Lock()
    abandoned = False

    def run() -> T:
        value = make()
        with guard:
            if not abandoned:
                made.append(value)
                return value
        undo(value)  # nobody waits for it any more
        return value

    try:
        return await anyio.to_thread.run_sync(run)
    except BaseException:
        with guard:
            abandoned = True
            held = list(made)
        for value in held:  # made before the cancellation reached the wait: undone here, this once
            undo(value)
        raise


async def _to_the_end(work: Callable[[], None]) -> None:
    """Run ``work`` in a worker thread, shielded from the cancellation of anyio's scopes; run it here instead if a
    cancellation from outside them (a runner's own cancel of the task) interrupts the wait before a thread took
    it. It runs once, whichever runs it: a lease is never left held, a journal never left unclosed."""
    taken = threading.Lock()

    def once() -> None:
        if taken.acquire(blocking=False):
            work()

    try:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(once)
    except BaseException:
        once()  # a thread that took it finishes it; else it runs now, blocking the loop this once
        raise


def _journal(
    store: EventStore,
    session_id: str,
    clock: Clock,
    snapshot_every: int,
    durability: Durability,
    lease: Lease | None,
    interrupted: bool,
) -> SessionJournal:
    """The session's journal: the stored session loaded, its interrupted calls completed; or a new one."""
    if not session_exists(store, session_id):
        return SessionJournal(store, session_id, snapshot_every=snapshot_every, durability=durability, lease=lease)
    journal = SessionJournal.open(store, session_id, snapshot_every=snapshot_every, durability=durability, lease=lease)
    if interrupted:
        complete_interrupted(journal, clock.now_ms())
    return journal
