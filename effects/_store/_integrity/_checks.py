"""Checks every store applies to a batch before writing it."""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import ConcurrencyError, SessionLeased, SessionNotFound
from .._records import Append, Lease, StoredInput, chain_hash

Stored = tuple[int, bytes]
"""A session as a store holds it: its length and its head (the last record's chain hash)."""

JOB_ERRORS = (ConcurrencyError, SessionLeased, SessionNotFound, ValueError)
"""What :func:`check_job` raises: the job fails alone, the rest of its group commits."""


def check_job(job: Append, stored: Stored | None, sessions: int) -> None:
    """Refuse a writer's job that does not continue its session as ``stored`` (``None``: no such session yet).

    Records must continue the log (see :func:`check_continues`); a snapshot
    alone needs its session to exist (:class:`SessionNotFound`, naming the
    store's ``sessions``) and to hold the record it follows (:func:`check_snapshot`).
    """
    if job.records:
        check_continues(job.session_id, job.records, job.expected, stored)
    elif job.snapshot is not None:
        if stored is None:
            raise SessionNotFound(job.session_id, sessions)
        check_snapshot(job.session_id, job.snapshot.seq, stored[0])


def check_lease(job: Append, held: Lease | None, now: int) -> None:
    """Fencing: refuse the job of a writer whose lease is no longer the session's (:class:`SessionLeased`).

    ``held`` is the session's lease as the store holds it in the job's
    transaction, ``now`` the store's time (for the message). A job without a
    lease (an import, a fork, a decision made in the viewer, a script's own
    journal) is not fenced: its expected length and head decide, as for every job.
    """
    if job.lease is not None and (held is None or held.owner != job.lease):
        raise SessionLeased(job.session_id, held, now, taken=True)


def check_snapshot(session_id: str, seq: int, length: int) -> None:
    """Refuse a snapshot saved alone after a record the log does not have (``ValueError``): it would be the state
    of records the store never took (a writer's refused batch), and be loaded once the log is that long."""
    if not 1 <= seq <= length:
        raise ValueError(
            f"snapshot of session {session_id!r} after record {seq}, but the log has records 1 to {length}: "
            "a snapshot is saved after records the store holds; reload the session and take it again"
        )


def check_continues(session_id: str, records: Sequence[StoredInput], expected: int, stored: Stored | None) -> None:
    """Refuse a batch that does not continue the stored log: :class:`ConcurrencyError` when the session does not
    have ``expected`` inputs, or when its last one is not the record the batch's first chains from.

    The length alone does not tell: a writer whose earlier batch was refused
    (while this one was already on its way) expects the length the log has
    again, yet its batch follows records the store never took. Comparing the
    stored head with the batch's first chain hash catches that, and any other
    writer that appended as many inputs.
    """
    length, head = stored if stored is not None else (0, b"")
    if length != expected:
        raise ConcurrencyError(session_id, expected, length)
    check_batch(session_id, records, expected)
    if expected and chain_hash(head, records[0].data) != records[0].hash:  # a new session: nothing to follow
        raise ConcurrencyError(session_id, expected, length, diverged=True)


def check_batch(session_id: str, records: Sequence[StoredInput], expected: int) -> None:
    """Refuse an empty batch or one whose sequence numbers do not continue the log at ``expected + 1``.

    This is a bug in the caller (the journal numbers records), so it raises ``ValueError``.
    """
    if not records:
        raise ValueError(f"append to session {session_id!r} got no records; expected at least one")
    for offset, record in enumerate(records, start=expected + 1):
        if record.seq != offset:
            raise ValueError(
                f"append to session {session_id!r}: record has seq {record.seq}, expected {offset} "
                f"(the log has {expected} inputs)"
            )
