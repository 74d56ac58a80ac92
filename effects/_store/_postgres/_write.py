"""The statements that write a PostgreSQL store, run by its group writer: one transaction (one WAL flush) per group.

The statements do not grow with the group: the sessions are locked and read in
one ``SELECT ... FOR UPDATE``, each batch is checked against them here (its
expected length, the head it follows, its numbering), and the rows of every
accepted batch go out in one statement per table (the inputs as a binary
``COPY``). A batch that fails its check is left out; the rest of the group
commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._integrity import JOB_ERRORS, Stored, check_job, check_lease
from .._lease import LeaseTerms
from .._packing import pack, pack_snapshot
from .._records import Append, Lease, timestamp_of
from ._lease import leases_of
from ._schema import CHANNEL

Verdicts = list[BaseException | None]

_INPUT_COLUMNS = "session_id, seq, version, codec, data, hash, turn_digest, state_hash"
_INPUT_TYPES = ("text", "int4", "int4", "int2", "bytea", "bytea", "bytea", "bytea")


def commit_group(db: Any, jobs: Sequence[Append], keep: int, terms: LeaseTerms, *, again: bool = False) -> Verdicts:
    """Write ``jobs`` in one transaction and commit once; returns each job's error or ``None``.

    ``again=True`` after a connection lost during an earlier attempt at the
    same group: a batch whose last record is already stored with the same
    hash was committed by that attempt and counts as written. A job carrying
    a lease token is refused (:class:`SessionLeased`) unless that lease is the
    session's (fencing); the lease rows stay locked until the commit.
    """
    with db.transaction():
        known = _lock(db, sorted({job.session_id for job in jobs}))
        leased = sorted({job.session_id for job in jobs if job.lease is not None})
        fence = leases_of(db, leased, terms) if leased else ({}, 0)
        done = _stored(db, jobs) if again else set()
        while True:
            verdicts, created, accepted = _check(jobs, known, done, fence)
            lost = _create(db, [jobs[i] for i in created])
            known.update((jobs[i].session_id, (0, b"")) for i in created)
            if not lost:
                break
            known.update(_lock(db, lost))  # another process created them meanwhile: check against its rows
        _insert(db, [jobs[i] for i in accepted], keep)
    return verdicts


def _check(
    jobs: Sequence[Append], known: dict[str, Stored], done: set[int], fence: tuple[dict[str, Lease], int]
) -> tuple[Verdicts, list[int], list[int]]:
    """Each job's verdict, the jobs that create their session, and the jobs to write (by index)."""
    leases, now = fence
    sessions = dict(known)
    verdicts: Verdicts = []
    created: list[int] = []
    accepted: list[int] = []
    for index, job in enumerate(jobs):
        if index in done:  # the earlier attempt committed the whole group, this job's snapshot with it
            verdicts.append(None)
            continue
        try:
            if job.lease is not None:
                check_lease(job, leases.get(job.session_id), now)
            check_job(job, sessions.get(job.session_id), len(sessions))
        except JOB_ERRORS as error:
            verdicts.append(error)
            continue
        verdicts.append(None)
        accepted.append(index)
        if job.records:
            if job.session_id not in sessions:
                created.append(index)
            sessions[job.session_id] = (job.records[-1].seq, job.records[-1].hash)
    return verdicts, created, accepted


def _lock(db: Any, names: list[str]) -> dict[str, Stored]:
    """Length and head of each named session that exists, its row locked until the commit (in name order: no
    deadlock)."""
    rows = db.execute(
        "SELECT name, length, head FROM agent_core_sessions WHERE name = ANY(%s) ORDER BY name FOR UPDATE", (names,)
    ).fetchall()
    return {name: (length, bytes(head)) for name, length, head in rows}


def _stored(db: Any, jobs: Sequence[Append]) -> set[int]:
    """The jobs whose last record is stored with the same hash (an earlier attempt committed them)."""
    last = [(job.session_id, job.records[-1].seq) for job in jobs if job.records]
    if not last:
        return set()
    rows = db.execute(
        "SELECT i.session_id, i.seq, i.hash FROM agent_core_inputs i "
        "JOIN unnest(%s::text[], %s::int[]) AS k(session_id, seq) ON i.session_id = k.session_id AND i.seq = k.seq",
        ([name for name, _ in last], [seq for _, seq in last]),
    ).fetchall()
    stored = {(name, seq): bytes(digest) for name, seq, digest in rows}
    return {
        index
        for index, job in enumerate(jobs)
        if job.records and stored.get((job.session_id, job.records[-1].seq)) == job.records[-1].hash
    }


def _create(db: Any, jobs: list[Append]) -> list[str]:
    """Insert the sessions these jobs start (length 0 until :func:`_insert`); returns those another process took."""
    if not jobs:
        return []
    jobs = sorted(jobs, key=lambda job: job.session_id)  # in name order, as rows are locked: no deadlock
    rows = db.execute(
        "INSERT INTO agent_core_sessions (name, length, head, first_timestamp, last_timestamp, parent, parent_seq) "
        "SELECT name, 0, head, stamp, stamp, parent, parent_seq "
        "FROM unnest(%s::text[], %s::bytea[], %s::bigint[], %s::text[], %s::int[]) "
        "AS v(name, head, stamp, parent, parent_seq) ON CONFLICT (name) DO NOTHING RETURNING name",
        (
            [job.session_id for job in jobs],
            [job.records[0].hash for job in jobs],
            [timestamp_of(job.records[0].data) for job in jobs],
            [None if job.parent is None else job.parent.session_id for job in jobs],
            [None if job.parent is None else job.parent.seq for job in jobs],
        ),
    ).fetchall()
    mine = {name for (name,) in rows}
    return [job.session_id for job in jobs if job.session_id not in mine]


def _insert(db: Any, jobs: list[Append], keep: int) -> None:
    """The accepted jobs' records, the sessions' new heads, snapshots, and one ``NOTIFY`` per session written."""
    if any(job.records for job in jobs):
        _copy_records(db, jobs)
        heads = {job.session_id: job.records[-1] for job in jobs if job.records}  # the last batch of each session
        db.execute(
            "WITH v AS (UPDATE agent_core_sessions s SET length = v.length, head = v.head, last_timestamp = v.stamp "
            "FROM unnest(%s::text[], %s::int[], %b::bytea[], %s::bigint[]) AS v(name, length, head, stamp) "
            "WHERE s.name = v.name RETURNING s.name) SELECT pg_notify(%s, name) FROM v",
            (list(heads), [r.seq for r in heads.values()], [r.hash for r in heads.values()],
             [timestamp_of(r.data) for r in heads.values()], CHANNEL),
        )  # fmt: skip
    snapshots = {(job.session_id, job.snapshot.seq): job.snapshot for job in jobs if job.snapshot is not None}
    if snapshots:
        _snapshots(db, snapshots, keep)


def _copy_records(db: Any, jobs: list[Append]) -> None:
    """The records as one binary ``COPY``: each value goes out as its bytes (no text escaping of the bytea columns,
    no arrays to build and unpack on the server). A taken ``(session, seq)`` fails the copy as an insert would."""
    with db.cursor().copy(f"COPY agent_core_inputs ({_INPUT_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(_INPUT_TYPES)
        write = copy.write_row
        for job in jobs:
            name = job.session_id
            for r in job.records:
                write((name, r.seq, r.schema_version, *pack(r.data), r.hash, r.turn_digest, r.state_hash))


def _snapshots(db: Any, snapshots: dict[tuple[str, int], Any], keep: int) -> None:
    packed = [
        (name, seq, s.schema_version, s.state_hash, *pack_snapshot(s.data), s.anchor)
        for (name, seq), s in snapshots.items()
    ]
    db.execute(
        "INSERT INTO agent_core_snapshots (session_id, seq, version, state_hash, codec, data, anchor) "
        "SELECT * FROM unnest(%s::text[], %s::int[], %s::int[], %s::bytea[], %s::smallint[], %s::bytea[], "
        "%s::bytea[]) ON CONFLICT (session_id, seq) DO UPDATE SET version = EXCLUDED.version, "
        "state_hash = EXCLUDED.state_hash, codec = EXCLUDED.codec, data = EXCLUDED.data, anchor = EXCLUDED.anchor",
        [list(column) for column in zip(*packed, strict=True)],
    )
    db.execute(
        "DELETE FROM agent_core_snapshots d USING (SELECT session_id, seq, "
        "row_number() OVER (PARTITION BY session_id ORDER BY seq DESC) AS n "
        "FROM agent_core_snapshots WHERE session_id = ANY(%s)) r "
        "WHERE d.session_id = r.session_id AND d.seq = r.seq AND r.n > %s",
        (sorted({name for name, _ in snapshots}), keep),
    )
