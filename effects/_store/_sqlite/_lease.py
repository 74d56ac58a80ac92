"""The lease statements of a SQLite store, on its one connection under its lock (see ``LeaseKeeper``)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence

from .._errors import SessionLeased
from .._lease import LEASE_COLUMNS, LeaseTerms, Writer, lease_of
from .._records import Lease
from ._schema import sqlite_errors

_COLUMNS = LEASE_COLUMNS


def now_ms(terms: LeaseTerms) -> int:
    """The time leases are judged by: ``terms.clock``, else this machine's wall clock (ms since the epoch)."""
    return terms.clock() if terms.clock is not None else time.time_ns() // 1_000_000


def leases_of(db: sqlite3.Connection, names: Iterable[str]) -> dict[str, Lease]:
    """The leases of the named sessions that have one, in one statement."""
    names = list(names)
    if len(names) == 1:  # one session's lease (a lone session's every commit): a plain lookup, 5x cheaper
        rows = db.execute(f"SELECT {_COLUMNS} FROM leases WHERE name = ?", (names[0],)).fetchall()
        return {row[0]: lease_of(row) for row in rows}
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM leases WHERE name IN (SELECT value FROM json_each(?))", (json.dumps(names),)
    ).fetchall()
    return {row[0]: lease_of(row) for row in rows}


class SqliteLeases:
    """A :class:`~effects._store._lease.LeaseBackend` on a SQLite store's connection."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock, path: str) -> None:
        self._db, self._lock, self._path = db, lock, path

    def take(self, session_id: str, owner: str, writer: Writer, free: Sequence[str], terms: LeaseTerms) -> Lease:
        """See :meth:`LeaseBackend.take`: one ``BEGIN IMMEDIATE`` transaction, so two takers take turns."""
        db = self._db
        with self._lock, sqlite_errors(self._path):
            db.execute("BEGIN IMMEDIATE")
            try:
                now = now_ms(terms)
                row = db.execute(f"SELECT {_COLUMNS} FROM leases WHERE name = ?", (session_id,)).fetchone()
                if row is not None and row[1] != owner and row[1] not in free and row[4] > now:
                    raise SessionLeased(session_id, lease_of(row), now)
                lease = Lease(
                    session_id=session_id,
                    owner=owner,
                    holder=writer.name,
                    acquired_at=now,
                    expires_at=now + terms.duration_ms,
                    host=writer.host,
                    pid=writer.pid,
                )
                db.execute(
                    f"INSERT OR REPLACE INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_id, owner, writer.name, now, lease.expires_at, writer.host, writer.pid),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return lease

    def extend(self, owners: Sequence[str], terms: LeaseTerms) -> set[str]:
        """See :meth:`LeaseBackend.extend`."""
        db, listed = self._db, json.dumps(list(owners))
        with self._lock, sqlite_errors(self._path):
            db.execute("BEGIN IMMEDIATE")
            try:
                kept = {
                    row[0]
                    for row in db.execute(
                        "SELECT owner FROM leases WHERE owner IN (SELECT value FROM json_each(?))", (listed,)
                    )
                }
                db.execute(
                    "UPDATE leases SET expires_at = ? WHERE owner IN (SELECT value FROM json_each(?))",
                    (now_ms(terms) + terms.duration_ms, listed),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return kept

    def drop(self, owners: Sequence[str]) -> None:
        """See :meth:`LeaseBackend.drop`."""
        with self._lock, sqlite_errors(self._path):
            self._db.execute(
                "DELETE FROM leases WHERE owner IN (SELECT value FROM json_each(?))", (json.dumps(list(owners)),)
            )

    def holder(self, session_id: str, terms: LeaseTerms) -> tuple[Lease | None, int]:
        """See :meth:`LeaseBackend.holder`; a store older than leases (opened read-only) has none."""
        with self._lock, sqlite_errors(self._path):
            if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'leases'").fetchone() is None:
                return None, now_ms(terms)
            row = self._db.execute(f"SELECT {_COLUMNS} FROM leases WHERE name = ?", (session_id,)).fetchone()
        return (None if row is None else lease_of(row)), now_ms(terms)
