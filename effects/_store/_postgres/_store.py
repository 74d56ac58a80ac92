"""``PostgresStore``: one log shared by many processes and machines, on PostgreSQL (psycopg 3)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from .._errors import SessionNotFound
from .._lease import LeasedStore, LeaseKeeper, LeaseTerms
from .._packing import stored_input, stored_snapshot
from .._records import Append, SessionInfo, Snapshot, StoredInput, session_info
from .._writer import GroupedWrites, GroupWriter
from ._connection import Reconnecting
from ._lease import PostgresLeases
from ._listen import DEFAULT_RECONNECT_FOR, InputsListener
from ._schema import HAS_ANCHORS, shown
from ._writer_connection import GroupConnection

_CHUNK = 2048  # records per query while reading: bounded memory, few round trips
_SESSION_COLUMNS = "name, length, head, first_timestamp, last_timestamp, parent, parent_seq"
_T = TypeVar("_T")


class PostgresStore(GroupedWrites, LeasedStore):
    """An :class:`EventStore` in a PostgreSQL database, shared by any number of processes and machines.

    ``dsn`` is a libpq connection string or URL (``postgresql://user@host/db``).
    The tables (``agent_core_*``) are created on first use. Writes go through
    one writer thread per store, on a connection of its own, which commits
    every batch pending from any session (and thread) in one transaction: one
    WAL flush carries many sessions' batches (group commit;
    ``group_commit=False`` commits each batch alone, for comparison).
    :meth:`submit` hands a batch over without blocking; :meth:`append` waits
    for it. The sessions' rows are locked and each batch is checked against
    its session's length, so a second writer of the same session (another
    process) fails with :class:`ConcurrencyError`, alone: the other batches of
    its group commit. The commit also sends ``NOTIFY agent_core_inputs`` with
    each session id written, so another process can :meth:`wait_for_inputs`
    without polling. A connection lost (server restarted) is opened again on
    the next call; a group that cannot be committed fails every batch in it
    with :class:`StoreUnavailable`. Those batches may or may not be durable (a
    connection lost during ``COMMIT`` leaves the outcome unknown): reopen the
    session to know. ``lease_terms`` says how long the lease of a session's
    writer lasts and how often the store renews it (see :class:`LeaseTerms`;
    the times are the database server's clock). Safe to share between threads
    (reads are serialized on one connection).
    """

    def __init__(
        self,
        dsn: str,
        *,
        readonly: bool = False,
        keep_snapshots: int = 1,
        group_commit: bool = True,
        lease_terms: LeaseTerms | None = None,
        reconnect_for: float = DEFAULT_RECONNECT_FOR,
    ) -> None:
        self.dsn = dsn
        self._readonly = readonly
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()
        self._anchors = not readonly  # the snapshots have their anchor column (a writable open adds it)
        self._reads = Reconnecting(dsn, readonly=readonly, opened=True, reconnect_for=reconnect_for)
        terms = lease_terms if lease_terms is not None else LeaseTerms()
        self._leases = LeaseKeeper(PostgresLeases(self._run), terms, shown(dsn))
        self._group = GroupConnection(dsn, readonly=readonly, keep=self._keep, terms=terms, reconnect_for=reconnect_for)
        self._writer: GroupWriter[Append] = GroupWriter(
            self._group, f"agent-core writer {shown(dsn)}", grouping=group_commit
        )

    def __repr__(self) -> str:
        return f"PostgresStore({shown(self.dsn)!r})"

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        """The records with ``start <= seq <= stop``, in order, fetched in chunks."""
        length = self.session(session_id).length
        last = length if stop is None else min(stop, length)
        return self._records(session_id, max(start, 1), last)

    def session(self, session_id: str) -> SessionInfo:
        """One session's metadata."""
        query = f"SELECT {_SESSION_COLUMNS} FROM agent_core_sessions WHERE name = %s"
        row = self._run(lambda db: db.execute(query, (session_id,)).fetchone())
        if row is None:
            raise SessionNotFound(session_id, self._count())
        return session_info(row)

    def sessions(self) -> list[SessionInfo]:
        """Every session, in creation order."""
        query = f"SELECT {_SESSION_COLUMNS} FROM agent_core_sessions ORDER BY id"
        return [session_info(row) for row in self._run(lambda db: db.execute(query).fetchall())]

    def sessions_page(self, prefix: str, offset: int, limit: int | None) -> tuple[list[SessionInfo], int]:
        """See :func:`~effects.sessions_page`: the page and the count, each one statement."""
        where = "WHERE left(name, %s) = %s"
        page = f"SELECT {_SESSION_COLUMNS} FROM agent_core_sessions {where} ORDER BY id LIMIT %s OFFSET %s"
        count = f"SELECT count(*) FROM agent_core_sessions {where}"
        rows = self._run(lambda db: db.execute(page, (len(prefix), prefix, limit, offset)).fetchall())
        total = self._run(lambda db: db.execute(count, (len(prefix), prefix)).fetchone())
        return [session_info(row) for row in rows], int(total[0])

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` (zlib-compressed); only the newest ``keep_snapshots`` stay."""
        self.session(session_id)  # raises SessionNotFound
        self._writer.submit(Append(session_id, (), 0, snapshot=snapshot)).result()

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest snapshot at or before ``at_most``; ``None`` also when its bytes cannot be restored."""
        length = self.session(session_id).length
        self._anchors = self._anchors or bool(self._run(lambda db: db.execute(HAS_ANCHORS).fetchone()[0]))
        row = self._run(
            lambda db: db.execute(
                f"SELECT seq, version, state_hash, codec, data, {'anchor' if self._anchors else 'NULL'} "
                "FROM agent_core_snapshots WHERE session_id = %s AND seq <= %s ORDER BY seq DESC LIMIT 1",
                (session_id, length if at_most is None else at_most),
            ).fetchone()
        )
        return stored_snapshot(row)

    async def wait_for_inputs(
        self, session_id: str, after: int, *, reconnect_for: float = DEFAULT_RECONNECT_FOR
    ) -> int:
        """Wait until the session has more than ``after`` inputs (written by any process); return its length.

        Returns at once if it already has. Wakes on the ``NOTIFY`` of the
        append, on a connection of its own, without polling; when the server
        restarts it connects again (backing off up to a few seconds) and checks
        the length before waiting on. Raises :class:`StoreUnavailable` (naming
        the DSN without its password) when the server stays unreachable for
        ``reconnect_for`` seconds, or at once when it refuses for a reason that
        will not pass (authentication, a database dropped, a replica that
        cannot ``LISTEN``). Cancel it, or bound it with ``anyio.fail_after``, to
        stop waiting sooner. Each call opens (and closes) a connection: to wait
        again and again, keep one open with :meth:`listen`.
        """
        async with self.listen(reconnect_for=reconnect_for) as listener:
            return await listener.wait_for_inputs(session_id, after)

    def listen(self, *, reconnect_for: float = DEFAULT_RECONNECT_FOR) -> InputsListener:
        """A listener that keeps one connection in ``LISTEN`` until it is closed; use it as ``async with``::

            async with store.listen() as listener:
                while True:
                    seen = await listener.wait_for_inputs("support-42", seen)

        Its waits behave as :meth:`wait_for_inputs`; a broken connection is
        logged (``effects.store``) and opened again.
        """
        return InputsListener(self.dsn, self._length, reconnect_for=reconnect_for)

    def close(self) -> None:
        """Commit the writes already submitted, give back the leases still held, then close the connections."""
        self._writer.close()
        self._leases.close()
        self._group.close()
        with self._lock:
            self._reads.close()

    def _run(self, body: Callable[[Any], _T]) -> _T:
        """``body(connection)`` under the lock; again on a new connection if the server dropped the old one.

        Running twice is safe: only reads run here (records go through the writer), and the lease statements, each
        of which does the same when run again.
        """
        with self._lock:
            return self._reads.run(lambda db, _again: body(db))

    def _length(self, session_id: str) -> int:
        found = self._info(session_id)
        return 0 if found is None else found.length

    def _info(self, session_id: str) -> SessionInfo | None:
        try:
            return self.session(session_id)
        except SessionNotFound:
            return None

    def _count(self) -> int:
        row = self._run(lambda db: db.execute("SELECT count(*) FROM agent_core_sessions").fetchone())
        return int(row[0])

    def _records(self, session_id: str, start: int, last: int) -> Iterator[StoredInput]:
        for low in range(start, last + 1, _CHUNK):
            rows = self._run(
                lambda db, low=low: db.execute(  # type: ignore[misc]
                    "SELECT seq, version, codec, data, hash, turn_digest, state_hash FROM agent_core_inputs "
                    "WHERE session_id = %s AND seq BETWEEN %s AND %s ORDER BY seq",
                    (session_id, low, min(low + _CHUNK - 1, last)),
                ).fetchall()
            )
            yield from map(stored_input, rows)
