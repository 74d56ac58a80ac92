"""The statements that write a SQLite store, run by its group writer inside one transaction per group."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from .._integrity import JOB_ERRORS, check_job, check_lease
from .._lease import LeaseTerms
from .._packing import pack, pack_snapshot
from .._records import Append, Lease, Origin, Snapshot, StoredInput, timestamp_of
from ._lease import leases_of, now_ms
from ._schema import commit_failure, failure, sqlite_errors


def commit_group(
    db: sqlite3.Connection, path: str, jobs: Sequence[Append], keep: int, terms: LeaseTerms
) -> list[BaseException | None]:
    """Write ``jobs`` in one ``BEGIN IMMEDIATE`` transaction and commit once; returns each job's error or ``None``.

    A job refused (:class:`ConcurrencyError`, a writer fenced off by :class:`SessionLeased`, a bad batch) writes
    nothing and the others commit. The
    statements are few and do not grow with the group (a multi-row insert, one update): the writer
    thread hands the interpreter's lock back and forth once per statement, which is slow while the
    event loop is busy. If the group cannot be written, the error is raised: a :class:`StoreUnavailable` that
    says nothing of it was written, or, when ``COMMIT`` itself failed and SQLite ended the transaction, that the
    outcome is unknown (see :func:`commit_failure`).
    """
    try:  # as sqlite_errors(path), without a context manager's cost on every commit
        db.execute("BEGIN IMMEDIATE")
        try:
            errors = _write(db, jobs, keep, terms)
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    except sqlite3.Error as error:
        raise failure(path, error) from None
    try:
        db.execute("COMMIT")
    except sqlite3.Error as error:
        if not db.in_transaction:  # SQLite ended the transaction: it may have written part of the commit
            raise commit_failure(path, error) from None
        with sqlite_errors(path):  # still open (busy, a deferred constraint): nothing was written
            db.execute("ROLLBACK")
        raise failure(path, error) from None
    return errors


def _write(db: sqlite3.Connection, jobs: Sequence[Append], keep: int, terms: LeaseTerms) -> list[BaseException | None]:
    names = [jobs[0].session_id] if len(jobs) == 1 else sorted({job.session_id for job in jobs})
    known = _sessions(db, names)  # name -> [key, length, head, lease owner]
    fenced = _fence(db, jobs, known)
    errors: list[BaseException | None] = []
    rows: list[tuple[object, ...]] = []
    heads: dict[int, tuple[int, bytes, int]] = {}
    for job in jobs:
        found = known.get(job.session_id)
        try:
            if fenced and job.session_id in fenced:
                check_lease(job, fenced[job.session_id], now_ms(terms))
            check_job(job, None if found is None else (found[1], found[2]), len(known))
        except JOB_ERRORS as error:
            errors.append(error)
            continue
        errors.append(None)
        if job.records:
            if found is None:
                found = known[job.session_id] = [_create(db, job.session_id, job.records, job.parent), 0, b"", None]
            key, last = found[0], job.records[-1]
            for r in job.records:
                codec, data = pack(r.data)
                rows.append((key, r.seq, r.schema_version, codec, data, r.hash, r.turn_digest, r.state_hash))
            found[1], found[2] = last.seq, last.hash
            heads[key] = (last.seq, last.hash, timestamp_of(last.data))
        if job.snapshot is not None and found is not None:  # found: check_job refuses a snapshot without a session
            snapshot_rows(db, found[0], job.snapshot, keep)
    if len(rows) == 1:  # one record (as most of a lone session's commits): the statement without a list
        db.execute(_INSERT_ONE, rows[0])
    else:
        for chunk in _chunks(rows):
            db.execute(_rows_sql(_INSERT, 8, len(chunk)), [value for row in chunk for value in row])
    if len(heads) == 1:  # a group of one session (as a lone session's every commit): a plain update
        [(key, (length, head, last_timestamp))] = heads.items()
        db.execute(_UPDATE_ONE, (length, head, last_timestamp, key))
        return errors
    for chunk in _chunks([(key, *head) for key, head in heads.items()]):
        db.execute(_rows_sql(_UPDATE, 4, len(chunk)) + _UPDATE_WHERE, [value for row in chunk for value in row])
    return errors


_INSERT = "INSERT INTO inputs VALUES "
_INSERT_ONE = _INSERT + "(?, ?, ?, ?, ?, ?, ?, ?)"
_UPDATE = "UPDATE sessions SET length = v.column2, head = v.column3, last_timestamp = v.column4 FROM (VALUES "
_UPDATE_WHERE = ") AS v WHERE sessions.id = v.column1"
_UPDATE_ONE = "UPDATE sessions SET length = ?, head = ?, last_timestamp = ? WHERE id = ?"


@functools.lru_cache(maxsize=256)
def _rows_sql(start: str, columns: int, rows: int) -> str:
    """``start`` followed by ``rows`` rows of ``columns`` placeholders (made once per size)."""
    row = f"({', '.join(['?'] * columns)})"
    return start + ", ".join([row] * rows)


def _sessions(db: sqlite3.Connection, names: list[str]) -> dict[str, list[Any]]:
    """Key, length, head and lease owner (``None``: no lease) of the named sessions that exist, in one statement."""
    if len(names) == 1:  # a group of one session (as a lone session's every commit): a plain lookup, 5x cheaper
        found = db.execute(_ONE_SESSION, (names[0],)).fetchone()
        return {} if found is None else {names[0]: list(found)}
    row = db.execute(_SESSIONS, (json.dumps(names),)).fetchone()
    return {name: [key, length, bytes.fromhex(head), owner] for name, key, length, head, owner in json.loads(row[0])}


_ONE_SESSION = (
    "SELECT sessions.id, sessions.length, sessions.head, leases.owner FROM sessions "
    "LEFT JOIN leases ON leases.name = sessions.name WHERE sessions.name = ?"
)
_SESSIONS = (
    "SELECT json_group_array(json_array(sessions.name, sessions.id, sessions.length, hex(sessions.head), leases.owner)) "
    "FROM sessions LEFT JOIN leases ON leases.name = sessions.name "
    "WHERE sessions.name IN (SELECT value FROM json_each(?))"
)


def _fence(db: sqlite3.Connection, jobs: Sequence[Append], known: dict[str, list[Any]]) -> dict[str, Lease | None]:
    """The leases of the sessions whose jobs the lease owners read with them do not clear: those the store refuses
    (:func:`check_lease` says why, naming the lease), and sessions created by this group (read here)."""
    doubtful = {
        job.session_id
        for job in jobs
        if job.lease is not None and (job.session_id not in known or known[job.session_id][3] != job.lease)
    }
    if not doubtful:  # every leased job's token is its session's lease: nothing to refuse
        return {}
    leases = leases_of(db, doubtful)
    return {name: leases.get(name) for name in doubtful}


def _chunks(rows: list[tuple[object, ...]]) -> list[list[tuple[object, ...]]]:
    return [rows[i : i + _ROWS] for i in range(0, len(rows), _ROWS)]


_ROWS = 1000  # rows per statement: 8,000 variables, under SQLite's limit of 32,766


def snapshot_rows(db: sqlite3.Connection, key: int, snapshot: Snapshot, keep: int) -> None:
    """Keep ``snapshot`` (zlib-compressed) for the session ``key``; only the newest ``keep`` stay."""
    codec, data = pack_snapshot(snapshot.data)
    db.execute(
        "INSERT OR REPLACE INTO snapshots (session, seq, version, state_hash, codec, data, anchor) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key, snapshot.seq, snapshot.schema_version, snapshot.state_hash, codec, data, snapshot.anchor),
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
