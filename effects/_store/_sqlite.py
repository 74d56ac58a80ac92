"""``SqliteStore``: the default event store: one SQLite file (WAL), many sessions."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence

from ._errors import ConcurrencyError, SessionNotFound
from ._packing import pack, pack_snapshot, stored_input, stored_snapshot
from ._records import Origin, SessionInfo, Snapshot, StoredInput, session_info, timestamp_of
from ._sqlite_schema import Synchronous, connect, sqlite_errors
from ._validate import check_batch

_CHUNK = 2048  # records per query while reading: bounded memory, few round trips
_SESSION_COLUMNS = "name, length, head, first_timestamp, last_timestamp, parent, parent_seq"


class SqliteStore:
    """An :class:`EventStore` in one SQLite file, shared by any number of sessions and processes.

    Appends run in one ``BEGIN IMMEDIATE`` transaction each, so a batch of
    inputs costs one commit and concurrent writers serialize (the loser of a
    race gets :class:`ConcurrencyError`). ``synchronous="FULL"`` (the default)
    makes a commit survive a power cut; ``"NORMAL"`` survives a crash of the
    process only, and commits faster. ``readonly=True`` opens an existing
    store without ever writing to it. ``keep_snapshots`` newest snapshots are
    kept per session. Safe to share between threads (calls are serialized).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        readonly: bool = False,
        keep_snapshots: int = 1,
    ) -> None:
        self.path = os.fspath(path)
        self._db = connect(path, readonly=readonly, synchronous=synchronous)
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()

    def append(
        self, session_id: str, records: Sequence[StoredInput], *, expected: int, parent: Origin | None = None
    ) -> None:
        """Append ``records`` in one transaction if the session has ``expected`` inputs (see :class:`EventStore`)."""
        rows = [(r.seq, r.schema_version, *pack(r.data), r.hash, r.turn_digest, r.state_hash) for r in records]
        with self._lock, sqlite_errors(self.path), self._transaction():
            found = self._db.execute("SELECT id, length FROM sessions WHERE name = ?", (session_id,)).fetchone()
            actual = 0 if found is None else found[1]
            if actual != expected:
                raise ConcurrencyError(session_id, expected, actual)
            check_batch(session_id, records, expected)
            key = self._create(session_id, records, parent) if found is None else found[0]
            self._db.executemany(
                f"INSERT INTO inputs VALUES ({key}, ?, ?, ?, ?, ?, ?, ?)",  # key is our own integer
                rows,
            )
            self._db.execute(
                "UPDATE sessions SET length = ?, head = ?, last_timestamp = ? WHERE id = ?",
                (records[-1].seq, records[-1].hash, timestamp_of(records[-1].data), key),
            )

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        """The records with ``start <= seq <= stop``, in order, fetched in chunks."""
        key, length = self._key(session_id)
        last = length if stop is None else min(stop, length)
        return self._records(key, max(start, 1), last)

    def session(self, session_id: str) -> SessionInfo:
        """One session's metadata."""
        with self._lock, sqlite_errors(self.path):
            row = self._db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE name = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(session_id, self._count())
        return session_info(row)

    def sessions(self) -> list[SessionInfo]:
        """Every session, in creation order."""
        with self._lock, sqlite_errors(self.path):
            rows = self._db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY id").fetchall()
        return [session_info(row) for row in rows]

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` (zlib-compressed); only the newest ``keep_snapshots`` stay."""
        key, _ = self._key(session_id)
        codec, data = pack_snapshot(snapshot.data)
        with self._lock, sqlite_errors(self.path), self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?, ?)",
                (key, snapshot.seq, snapshot.schema_version, snapshot.state_hash, codec, data),
            )
            self._db.execute(
                "DELETE FROM snapshots WHERE session = ? AND seq NOT IN "
                "(SELECT seq FROM snapshots WHERE session = ? ORDER BY seq DESC LIMIT ?)",
                (key, key, self._keep),
            )

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest snapshot at or before ``at_most``; ``None`` also when its bytes cannot be restored."""
        key, length = self._key(session_id)
        with self._lock, sqlite_errors(self.path):
            row = self._db.execute(
                "SELECT seq, version, state_hash, codec, CAST(data AS BLOB) FROM snapshots "
                "WHERE session = ? AND seq <= ? ORDER BY seq DESC LIMIT 1",
                (key, length if at_most is None else at_most),
            ).fetchone()
        return stored_snapshot(row)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _create(self, session_id: str, records: Sequence[StoredInput], parent: Origin | None) -> int:
        cursor = self._db.execute(
            "INSERT INTO sessions (name, length, head, first_timestamp, last_timestamp, parent, parent_seq) "
            "VALUES (?, 0, ?, ?, 0, ?, ?)",
            (
                session_id,
                records[0].hash,
                timestamp_of(records[0].data),
                None if parent is None else parent.session_id,
                None if parent is None else parent.seq,
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _key(self, session_id: str) -> tuple[int, int]:
        with self._lock, sqlite_errors(self.path):
            row = self._db.execute("SELECT id, length FROM sessions WHERE name = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(session_id, self._count())
        return row[0], row[1]

    def _count(self) -> int:
        with self._lock, sqlite_errors(self.path):
            count: int = self._db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        return count

    def _records(self, key: int, start: int, last: int) -> Iterator[StoredInput]:
        for low in range(start, last + 1, _CHUNK):
            with self._lock, sqlite_errors(self.path):
                rows = self._db.execute(
                    "SELECT seq, version, codec, CAST(data AS BLOB), CAST(hash AS BLOB), turn_digest, state_hash FROM inputs "
                    "WHERE session = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                    (key, low, min(low + _CHUNK - 1, last)),
                ).fetchall()
            yield from map(stored_input, rows)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` when the block raises."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is not None:
            self._db.execute("ROLLBACK")
            return
        try:
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
