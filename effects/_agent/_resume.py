"""``open_session``: a durable session over a store, new or resumed: complete what was interrupted, then let
the state restart the rest."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from agent_core import AgentConfig

from .._clock import Clock, SystemClock
from .._machine import DEFAULT_MAX_BACKLOG
from .._model import Model
from .._store import DEFAULT_SNAPSHOT_EVERY, Durability, EventStore
from .._tools import Tool
from ._durable import durable_journal
from ._handoffs import ContextFilter
from ._ids import IdSource
from ._output import OutputType
from ._session import Agent
from ._session_handle import Session


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
    name: str = "",
    handoffs: Iterable[Agent | str] = (),
    handoff_context: ContextFilter | None = None,
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
    ``output_type`` when that gives the same schema, else against the logged schema. ``name``, ``handoffs``
    and ``handoff_context`` are :class:`Agent`'s: a stored session goes on with the agent its log last handed
    the conversation to, so pass the same agents each time.
    """
    clock = clock if clock is not None else SystemClock()
    durable = durable_journal(store, session_id, clock, snapshot_every=snapshot_every, durability=durability)
    async with durable as journal:
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
            name=name,
            handoffs=handoffs,
            handoff_context=handoff_context,
        )
        async with agent.running() as session:
            yield session
