"""Checks every store applies to a batch before writing it."""

from __future__ import annotations

from collections.abc import Sequence

from ._errors import ConcurrencyError, SessionNotFound
from ._records import Append, StoredInput

JOB_ERRORS = (ConcurrencyError, SessionNotFound, ValueError)
"""What :func:`check_job` raises: the job fails alone, the rest of its group commits."""


def check_job(job: Append, length: int | None, sessions: int) -> None:
    """Refuse a writer's job that does not continue its session, which has ``length`` inputs (``None``: none yet).

    Records must continue the log (:class:`ConcurrencyError` when another
    writer came first; see :func:`check_batch`); a snapshot alone needs its
    session to exist (:class:`SessionNotFound`, naming the store's ``sessions``).
    """
    if job.records:
        actual = length or 0
        if actual != job.expected:
            raise ConcurrencyError(job.session_id, job.expected, actual)
        check_batch(job.session_id, job.records, job.expected)
    elif job.snapshot is not None and length is None:
        raise SessionNotFound(job.session_id, sessions)


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
