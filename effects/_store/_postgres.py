"""``PostgresStore``: one log shared by many processes and machines, on PostgreSQL (psycopg 3)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ._errors import ConcurrencyError, SessionNotFound
from ._packing import pack, pack_snapshot, stored_input, stored_snapshot
from ._postgres_schema import CHANNEL, connect, driver, shown, unusable
from ._postgres_wait import wait_for_inputs
from ._records import Origin, SessionInfo, Snapshot, StoredInput, session_info, timestamp_of
from ._validate import check_batch

_CHUNK = 2048  # records per query while reading: bounded memory, few round trips
_SESSION_COLUMNS = "name, length, head, first_timestamp, last_timestamp, parent, parent_seq"
_T = TypeVar("_T")


class PostgresStore:
    """An :class:`EventStore` in a PostgreSQL database, shared by any number of processes and machines.

    ``dsn`` is a libpq connection string or URL (``postgresql://user@host/db``).
    The tables (``agent_core_*``) are created on first use. An append is one
    transaction: its rows' primary key ``(session_id, seq)`` and a
    compare-and-set on the session's length make a second writer of the same
    session fail with :class:`ConcurrencyError`, never interleave. The append
    also sends ``NOTIFY agent_core_inputs`` with the session id, so another
    process can :meth:`wait_for_inputs` without polling. A connection lost
    (server restarted) is opened again on the next call; the call that saw it
    break raises :class:`StoreError` and wrote nothing it did not commit.
    Safe to share between threads (calls are serialized on one connection).
    """

    def __init__(self, dsn: str, *, readonly: bool = False, keep_snapshots: int = 1) -> None:
        self.dsn = dsn
        self._readonly = readonly
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()
        self._db = connect(dsn, readonly=readonly)

    def __repr__(self) -> str:
        return f"PostgresStore({shown(self.dsn)!r})"

    def append(
        self, session_id: str, records: Sequence[StoredInput], *, expected: int, parent: Origin | None = None
    ) -> None:
        """Append ``records`` in one transaction if the session has ``expected`` inputs (see :class:`EventStore`)."""
        check_batch(session_id, records, expected)
        rows = [
            (session_id, r.seq, r.schema_version, *pack(r.data), r.hash, r.turn_digest, r.state_hash) for r in records
        ]
        last = records[-1]
        unique = driver().errors.UniqueViolation
        attempts: list[None] = []

        def write(db: Any) -> bool:
            attempts.append(None)
            with db.transaction():
                if expected == 0:
                    created = db.execute(
                        "INSERT INTO agent_core_sessions (name, length, head, first_timestamp, last_timestamp, "
                        "parent, parent_seq) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING",
                        (
                            session_id,
                            last.seq,
                            last.hash,
                            timestamp_of(records[0].data),
                            timestamp_of(last.data),
                            None if parent is None else parent.session_id,
                            None if parent is None else parent.seq,
                        ),
                    )
                else:
                    created = db.execute(
                        "UPDATE agent_core_sessions SET length = %s, head = %s, last_timestamp = %s "
                        "WHERE name = %s AND length = %s",
                        (last.seq, last.hash, timestamp_of(last.data), session_id, expected),
                    )
                if created.rowcount != 1:
                    return False
                with db.cursor() as cursor:
                    cursor.executemany("INSERT INTO agent_core_inputs VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)
                db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, session_id))
            return True

        try:
            written = self._run(write)
        except unique:  # the primary key: another writer's rows are there
            written = False
        if not written:
            found = self._info(session_id)
            if len(attempts) > 1 and found is not None and (found.length, found.head) == (last.seq, last.hash):
                return  # our own batch, committed by an attempt whose answer the connection lost
            raise ConcurrencyError(session_id, expected, 0 if found is None else found.length)

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

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` (zlib-compressed); only the newest ``keep_snapshots`` stay."""
        self.session(session_id)
        codec, data = pack_snapshot(snapshot.data)

        def write(db: Any) -> None:
            with db.transaction():
                db.execute(
                    "INSERT INTO agent_core_snapshots VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (session_id, seq) "
                    "DO UPDATE SET version = EXCLUDED.version, state_hash = EXCLUDED.state_hash, "
                    "codec = EXCLUDED.codec, data = EXCLUDED.data",
                    (session_id, snapshot.seq, snapshot.schema_version, snapshot.state_hash, codec, data),
                )
                db.execute(
                    "DELETE FROM agent_core_snapshots WHERE session_id = %s AND seq NOT IN "
                    "(SELECT seq FROM agent_core_snapshots WHERE session_id = %s ORDER BY seq DESC LIMIT %s)",
                    (session_id, session_id, self._keep),
                )

        self._run(write)

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest snapshot at or before ``at_most``; ``None`` also when its bytes cannot be restored."""
        length = self.session(session_id).length
        row = self._run(
            lambda db: db.execute(
                "SELECT seq, version, state_hash, codec, data FROM agent_core_snapshots "
                "WHERE session_id = %s AND seq <= %s ORDER BY seq DESC LIMIT 1",
                (session_id, length if at_most is None else at_most),
            ).fetchone()
        )
        return stored_snapshot(row)

    async def wait_for_inputs(self, session_id: str, after: int) -> int:
        """Wait until the session has more than ``after`` inputs (written by any process); return its length.

        Returns at once if it already has. Wakes on the ``NOTIFY`` of the
        append, on a connection of its own, without polling; when the server
        restarts it connects again (backing off up to a few seconds) and checks
        the length before waiting on. Cancel it, or bound it with
        ``anyio.fail_after``, to stop waiting.
        """
        return await wait_for_inputs(self.dsn, session_id, after, lambda: self._length(session_id))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _run(self, body: Callable[[Any], _T]) -> _T:
        """``body(connection)`` under the lock; once more on a new connection if the server dropped the old one.

        Running twice is safe: reads repeat, and an append whose commit was
        lost with the connection is recognized by :meth:`append` (its last
        hash is the session's head). A second failure is a :class:`StoreError`.
        """
        psycopg = driver()
        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._db.broken:
                        self._db = connect(self.dsn, readonly=self._readonly)
                    return body(self._db)
                except (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction) as error:
                    if attempt == 2 or not self._db.broken:
                        raise unusable(self.dsn, error) from None
            raise AssertionError("unreachable")

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
