"""The connection a PostgreSQL store's writer thread commits groups on: reconnecting, and keeping errors per batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._errors import ConcurrencyError, StoreUnavailable
from ._postgres_schema import connect, driver, unusable
from ._postgres_write import Verdicts, commit_group
from ._records import Append


class GroupConnection:
    """Commits the groups of one store's :class:`GroupWriter` on a connection of its own (reads never wait on it).

    A connection the server dropped is opened again and the group written once
    more; what the lost attempt committed is recognized by its hashes (see
    :func:`commit_group`). A second failure fails every job of the group with
    :class:`StoreUnavailable`. A group the server refuses for one batch's rows
    (a row no length check foresaw, such as a record another program inserted
    past the session's end) is written again one batch per transaction, so the
    error stays with its batch.
    """

    def __init__(self, dsn: str, *, readonly: bool, keep: int) -> None:
        self.dsn = dsn
        self._readonly = readonly
        self._keep = keep
        self._db: Any = None  # opened by the first group, on the writer thread

    def __call__(self, jobs: Sequence[Append]) -> Verdicts:
        """Commit ``jobs`` as one group (see the class); returns each job's error or ``None``."""
        psycopg = driver()
        try:
            return self._commit(jobs)
        except (psycopg.IntegrityError, psycopg.DataError) as error:
            if len(jobs) == 1:
                return [_refused(jobs[0], error)]
        return [self._alone(job) for job in jobs]

    def _alone(self, job: Append) -> BaseException | None:
        """One job in a transaction of its own: whatever fails is its own error (the others' commits stand)."""
        try:
            return self([job])[0]
        except Exception as error:  # the job's verdict, handed to its waiter
            return error

    def close(self) -> None:
        """Close the connection (after the writer stopped)."""
        if self._db is not None:
            self._db.close()

    def _commit(self, jobs: Sequence[Append]) -> Verdicts:
        psycopg = driver()
        for attempt in (1, 2):
            try:
                if self._db is None or self._db.broken:
                    self._db = connect(self.dsn, readonly=self._readonly)
                return commit_group(self._db, jobs, self._keep, again=attempt == 2)
            except (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction) as error:
                if attempt == 2 or self._db is None or not self._db.broken:
                    raise unusable(self.dsn, error) from None
            except StoreUnavailable:  # the server could not be reached again
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _refused(job: Append, error: Exception) -> BaseException:
    """The error of one batch the server refused: a taken ``(session, seq)`` is another writer's record."""
    if isinstance(error, driver().errors.UniqueViolation):
        taken = ConcurrencyError(job.session_id, job.expected, job.expected + 1)
        taken.__cause__ = error
        return taken
    reason = " ".join(str(error).split())
    return ValueError(f"session {job.session_id!r}: the server refused the batch ({reason}); nothing of it was written")
