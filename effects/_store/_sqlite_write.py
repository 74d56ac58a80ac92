"""The statements that write a SQLite store, run by its group writer inside one transaction per group."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ._errors import ConcurrencyError
from ._group import Write
from ._packing import pack, pack_snapshot
from ._records import Origin, Snapshot, StoredInput, timestamp_of
from ._sqlite_schema import sqlite_errors
from ._validate import check_batch


def commit_group(db: sqlite3.Connection, path: str, writes: Sequence[Write]) -> list[BaseException | None]:
    """Run ``writes`` in one ``BEGIN IMMEDIATE`` transaction, each in a savepoint of its own, and commit once.

    A write that raises is rolled back alone and its error returned in its
    place; the others commit together. If the commit fails, the error is raised.
    """
    errors: list[BaseException | None] = []
    with sqlite_errors(path):
        db.execute("BEGIN IMMEDIATE")
        try:
            for write in writes:
                db.execute("SAVEPOINT job")
                try:
                    with sqlite_errors(path):
                        write()
                except Exception as error:
                    db.execute("ROLLBACK TO job")
                    errors.append(error)
                else:
                    errors.append(None)
                db.execute("RELEASE job")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return errors


def append_rows(
    db: sqlite3.Connection, session_id: str, records: Sequence[StoredInput], expected: int, parent: Origin | None
) -> int:
    """Insert ``records`` if the session has ``expected`` inputs; returns the session's key."""
    found = db.execute("SELECT id, length FROM sessions WHERE name = ?", (session_id,)).fetchone()
    actual = 0 if found is None else found[1]
    if actual != expected:
        raise ConcurrencyError(session_id, expected, actual)
    check_batch(session_id, records, expected)
    key: int = _create(db, session_id, records, parent) if found is None else found[0]
    rows = [(r.seq, r.schema_version, *pack(r.data), r.hash, r.turn_digest, r.state_hash) for r in records]
    db.executemany(f"INSERT INTO inputs VALUES ({key}, ?, ?, ?, ?, ?, ?, ?)", rows)  # key is our own integer
    db.execute(
        "UPDATE sessions SET length = ?, head = ?, last_timestamp = ? WHERE id = ?",
        (records[-1].seq, records[-1].hash, timestamp_of(records[-1].data), key),
    )
    return key


def snapshot_rows(db: sqlite3.Connection, key: int, snapshot: Snapshot, keep: int) -> None:
    """Keep ``snapshot`` (zlib-compressed) for the session ``key``; only the newest ``keep`` stay."""
    codec, data = pack_snapshot(snapshot.data)
    db.execute(
        "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?, ?)",
        (key, snapshot.seq, snapshot.schema_version, snapshot.state_hash, codec, data),
    )
    db.execute(
        "DELETE FROM snapshots WHERE session = ? AND seq NOT IN "
        "(SELECT seq FROM snapshots WHERE session = ? ORDER BY seq DESC LIMIT ?)",
        (key, key, keep),
    )


def _create(db: sqlite3.Connection, session_id: str, records: Sequence[StoredInput], parent: Origin | None) -> int:
    cursor = db.execute(
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
