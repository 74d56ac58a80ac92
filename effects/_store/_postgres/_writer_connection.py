"""The connection a PostgreSQL store's writer thread commits groups on: reconnecting, and keeping errors per batch."""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import ConcurrencyError
from .._lease import LeaseTerms
from .._records import Append
from ._connection import Reconnecting
from ._schema import driver
from ._write import Verdicts, commit_group


class GroupConnection:
    """Commits the groups of one store's :class:`GroupWriter` on a connection of its own (reads never wait on it).

    A connection the server dropped is opened again (for up to
    ``reconnect_for`` seconds while the server restarts) and the group written
    once more; what a lost attempt committed is recognized by its hashes (see
    :func:`commit_group`). A server out of reach for longer fails every job of
    the group with :class:`StoreUnavailable`: its batches may or may not be
    durable (the connection may have been lost during ``COMMIT``); reopen a
    session to know. A group the server refuses for one batch's rows (a row no length
    check foresaw, such as a record another program inserted past the
    session's end) is written again one batch per transaction, so the error
    stays with its batch.
    """

    def __init__(self, dsn: str, *, readonly: bool, keep: int, terms: LeaseTerms, reconnect_for: float) -> None:
        self.dsn = dsn
        self._keep = keep
        self._terms = terms
        # Opened on the writer thread.
        self._connection = Reconnecting(dsn, readonly=readonly, opened=False, reconnect_for=reconnect_for)

    def __call__(self, jobs: Sequence[Append]) -> Verdicts:
        """Commit ``jobs`` as one group (see the class); returns each job's error or ``None``."""
        psycopg = driver()
        try:
            return self._connection.run(lambda db, again: commit_group(db, jobs, self._keep, self._terms, again=again))
        except (psycopg.IntegrityError, psycopg.DataError) as error:
            if len(jobs) == 1:
                return [self._refused(jobs[0], error)]
        return [self._alone(job) for job in jobs]

    def _alone(self, job: Append) -> BaseException | None:
        """One job in a transaction of its own: whatever fails is its own error (the others' commits stand)."""
        try:
            return self([job])[0]
        except Exception as error:  # the job's verdict, handed to its waiter
            return error

    def _refused(self, job: Append, error: Exception) -> BaseException:
        """The error of one batch the server refused: a taken ``(session, seq)`` is another writer's record."""
        if isinstance(error, driver().errors.UniqueViolation):
            stored = self._connection.run(
                lambda db, _again: db.execute(
                    "SELECT count(*) FROM agent_core_inputs WHERE session_id = %s", (job.session_id,)
                ).fetchone()[0]
            )
            taken = ConcurrencyError(job.session_id, job.expected, int(stored))
            taken.__cause__ = error
            return taken
        reason = " ".join(str(error).split())
        return ValueError(
            f"session {job.session_id!r}: the server refused the batch ({reason}); nothing of it was written"
        )

    def close(self) -> None:
        """Close the connection (after the writer stopped)."""
        self._connection.close()
