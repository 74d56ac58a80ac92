"""Picking up inputs that others append to a running session's log (a person deciding in the viewer).

A running session is its log's only writer, except for decisions made
elsewhere: ``tool-call-approved`` / ``tool-call-denied`` appended through the
store by :func:`~effects.decide` (with the expected length, so a race is
refused, never merged). :func:`follow_store` waits for new records (or looks
at the store now and then, off the event loop) and dispatches each new
record's input into the session; the session's journal then appends the same
record, which :class:`SharedStore` recognises as already stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import anyio

from agent_core import AgentInput, AgentState

from ._errors import ConcurrencyError
from ._lease import LeasedStore
from ._postgres import PostgresStore
from ._protocol import EventStore, sessions_page
from ._records import Origin, SessionInfo, Snapshot, StoredInput

DEFAULT_FOLLOW_INTERVAL = 0.2
"""Seconds between two looks at a store that cannot wait for new inputs (SQLite, memory)."""

_STARTING = 0.05  # seconds between looks at a session not started yet (it has no id to wait on)


class SharedStore:
    """An :class:`EventStore` for sessions whose logs others may append to; wraps another store.

    An append whose leading records are already stored, at the same positions
    with the same chain hashes (so the same bytes after the same history),
    skips them and appends the rest: the running session re-appending a
    decision it picked up from the log. Any other conflict still raises
    :class:`ConcurrencyError`. The wrapped store's leases are the sessions'
    leases (see :func:`leasing`).
    """

    def __init__(self, store: EventStore) -> None:
        self.store = store

    def append(
        self,
        session_id: str,
        records: Sequence[StoredInput],
        *,
        expected: int,
        parent: Origin | None = None,
        lease: str | None = None,
    ) -> None:
        """Append ``records``, skipping those another writer already stored identically (see the class)."""
        fence = {} if lease is None else {"lease": lease}  # a store of the user's own may know no leases
        try:
            self.store.append(session_id, records, expected=expected, parent=parent, **fence)
        except ConcurrencyError:
            stored = list(self.store.read(session_id, expected + 1, expected + len(records)))
            same = 0
            while same < len(stored) and (stored[same].seq, stored[same].hash) == (
                records[same].seq,
                records[same].hash,
            ):
                same += 1
            if same == 0:
                raise
            if same < len(records):
                self.store.append(session_id, records[same:], expected=expected + same, parent=parent, **fence)

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        """See :meth:`EventStore.read`."""
        return self.store.read(session_id, start, stop)

    def session(self, session_id: str) -> SessionInfo:
        """See :meth:`EventStore.session`."""
        return self.store.session(session_id)

    def sessions(self) -> list[SessionInfo]:
        """See :meth:`EventStore.sessions`."""
        return self.store.sessions()

    def sessions_page(self, prefix: str, offset: int, limit: int | None) -> tuple[list[SessionInfo], int]:
        """See :func:`~effects.sessions_page`."""
        return sessions_page(self.store, prefix=prefix, offset=offset, limit=limit)

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """See :meth:`EventStore.save_snapshot`."""
        self.store.save_snapshot(session_id, snapshot)

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """See :meth:`EventStore.load_snapshot`."""
        return self.store.load_snapshot(session_id, at_most)

    def close(self) -> None:
        """Close the wrapped store."""
        self.store.close()


def leasing(store: EventStore) -> LeasedStore | None:
    """The store that keeps the leases of ``store``'s sessions: itself, or the store a :class:`SharedStore` wraps;
    ``None`` for a store of the user's own without leases (its sessions are checked by their length alone)."""
    inner = store.store if isinstance(store, SharedStore) else store
    return inner if isinstance(inner, LeasedStore) else None


class _Running(Protocol):
    @property
    def state(self) -> AgentState: ...

    @property
    def session_id(self) -> str: ...

    def dispatch(self, inp: AgentInput) -> None: ...


@asynccontextmanager
async def follow_store(
    store: EventStore, session: _Running, interval: float = DEFAULT_FOLLOW_INTERVAL
) -> AsyncIterator[None]:
    """While the block runs, dispatch into ``session`` every input others append to its log in ``store``.

    A store that can wait for new inputs (:class:`PostgresStore`, also inside
    a :class:`SharedStore`) wakes the follower on its notifications; any other
    is looked at every ``interval`` seconds. The store is read on a worker
    thread, never on the event loop. Open the session on a :class:`SharedStore`
    so its journal accepts the records it did not write::

        store = SharedStore(SqliteStore("agent.db"))
        async with open_session(store, "support-42", model, tools=[...]) as session, follow_store(store, session):
            ...  # an approval clicked in `agent-core ui agent.db` reaches this session
    """
    async with anyio.create_task_group() as group:
        group.start_soon(_follow, store, session, interval)
        try:
            yield
        finally:
            group.cancel_scope.cancel()


async def _follow(store: EventStore, session: _Running, interval: float) -> None:
    dispatched = 0
    async with _waiting(store, interval) as wait:
        while True:
            session_id = session.session_id  # read each time: empty until the session started
            if not session_id:
                await anyio.sleep(min(interval, _STARTING))
                continue
            await wait(session_id, max(session.state.step, dispatched))
            known = max(session.state.step, dispatched)  # the session's own inputs are not news
            records = await anyio.to_thread.run_sync(_records_after, store, session_id, known)
            for record in records:
                session.dispatch(record.decode())
                dispatched = record.seq


@asynccontextmanager
async def _waiting(store: EventStore, interval: float) -> AsyncIterator[Callable[[str, int], Awaitable[object]]]:
    """How the follower waits for news: on one listener for the whole follow if the store offers ``listen()``
    (:class:`PostgresStore`), else on the store's own ``wait_for_inputs`` if it has one, else a sleep."""
    inner = store.store if isinstance(store, SharedStore) else store
    if isinstance(inner, PostgresStore):
        async with inner.listen() as listener:
            yield listener.wait_for_inputs
        return
    own: Callable[[str, int], Awaitable[object]] | None = getattr(inner, "wait_for_inputs", None)
    if own is not None:  # a store of the user's own with a way to wait
        yield own
        return

    async def sleep(session_id: str, known: int) -> None:
        await anyio.sleep(interval)

    yield sleep


def _records_after(store: EventStore, session_id: str, known: int) -> list[StoredInput]:
    """The records past ``known`` (the read looks at the session's length once: none past it, no query)."""
    return list(store.read(session_id, known + 1))
