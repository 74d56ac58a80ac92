"""``SqliteStore``: the default event store: one SQLite file (WAL), many sessions."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence

from .._errors import SessionNotFound
from .._lease import LeasedStore, LeaseKeeper, LeaseTerms
from .._packing import stored_input, stored_snapshot
from .._records import Append, SessionInfo, Snapshot, StoredInput, session_info
from .._writer import GroupedWrites, GroupWriter
from ._lease import SqliteLeases
from ._schema import Synchronous, connect, has_anchors, sqlite_errors
from ._write import commit_group

_CHUNK = 2048  # records per query while reading: bounded memory, few round trips
_SESSION_COLUMNS = "name, length, head, first_timestamp, last_timestamp, parent, parent_seq"


class SqliteStore(GroupedWrites, LeasedStore):
    """An :class:`EventStore` in one SQLite file, shared by any number of sessions and processes.

    Writes go through one writer thread per store, which commits every batch
    pending from any session (and thread) in one ``BEGIN IMMEDIATE``
    transaction: one fsync carries many sessions' batches (group commit;
    ``group_commit=False`` commits each batch alone, for comparison).
    :meth:`submit` hands a batch over without blocking; :meth:`append` waits
    for it. Writers in other processes serialize with it (the loser of a race
    gets :class:`ConcurrencyError`). ``synchronous="FULL"`` (the default)
    makes a commit survive a power cut; ``"NORMAL"`` survives a crash of the
    process only, and commits faster. ``readonly=True`` opens an existing
    store without ever writing to it. ``keep_snapshots`` newest snapshots are
    kept per session. ``lease_terms`` says how long the lease of a session's
    writer lasts and how often the store renews it (see :class:`LeaseTerms`;
    the times are this machine's clock). Safe to share between threads
    (calls are serialized).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        readonly: bool = False,
        keep_snapshots: int = 1,
        group_commit: bool = True,
        lease_terms: LeaseTerms | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self._db = connect(path, readonly=readonly, synchronous=synchronous)
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()
        terms = lease_terms if lease_terms is not None else LeaseTerms()
        self._leases = LeaseKeeper(SqliteLeases(self._db, self._lock, self.path), terms, self.path)
        self._anchors = has_anchors(self._db)  # False: a store older than anchors, opened read-only
        self._writer: GroupWriter[Append] = GroupWriter(
            self._commit_group, f"agent-core writer {self.path}", grouping=group_commit
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

    def sessions_page(self, prefix: str, offset: int, limit: int | None) -> tuple[list[SessionInfo], int]:
        """See :func:`~effects.sessions_page`: the page and the count, each one statement."""
        where = "WHERE substr(name, 1, ?) = ?"
        with self._lock, sqlite_errors(self.path):
            rows = self._db.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions {where} ORDER BY id LIMIT ? OFFSET ?",
                (len(prefix), prefix, -1 if limit is None else limit, offset),
            ).fetchall()
            total: int = self._db.execute(f"SELECT count(*) FROM sessions {where}", (len(prefix), prefix)).fetchone()[0]
        return [session_info(row) for row in rows], total

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` (zlib-compressed); only the newest ``keep_snapshots`` stay."""
        self._key(session_id)  # raises SessionNotFound
        self._writer.submit(Append(session_id, (), 0, snapshot=snapshot)).result()

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest snapshot at or before ``at_most``; ``None`` also when its bytes cannot be restored."""
        key, length = self._key(session_id)
        with self._lock, sqlite_errors(self.path):
            self._anchors = self._anchors or has_anchors(self._db)
            row = self._db.execute(
                f"SELECT seq, version, state_hash, codec, CAST(data AS BLOB), {'anchor' if self._anchors else 'NULL'} "
                "FROM snapshots WHERE session = ? AND seq <= ? ORDER BY seq DESC LIMIT 1",
                (key, length if at_most is None else at_most),
            ).fetchone()
        return stored_snapshot(row)

    def close(self) -> None:
        """Commit the writes already submitted, give back the leases still held, then close the connection."""
        self._writer.close()
        self._leases.close()
        with self._lock:
            self._db.close()

    def _commit_group(self, jobs: Sequence[Append]) -> list[BaseException | None]:
        with self._lock:
            return commit_group(self._db, self.path, jobs, self._keep, self._leases.terms)

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
