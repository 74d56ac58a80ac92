"""What a store writing through a :class:`GroupWriter` offers: ``submit`` without blocking, ``append`` waiting."""

from __future__ import annotations

from collections.abc import Sequence

from .._records import Append, Origin, Snapshot, StoredInput
from ._group_writer import GroupWriter
from ._pending_commit import PendingCommit


class GroupedWrites:
    """The write side of :class:`SqliteStore` and :class:`PostgresStore`: every write goes through ``_writer``."""

    _writer: GroupWriter[Append]

    def append(
        self,
        session_id: str,
        records: Sequence[StoredInput],
        *,
        expected: int,
        parent: Origin | None = None,
        lease: str | None = None,
    ) -> None:
        """Append ``records`` in one transaction if the session has ``expected`` inputs (see :class:`EventStore`).

        Blocks until committed; the commit is shared with the writes other threads submitted meanwhile.
        """
        self.submit(session_id, records, expected=expected, parent=parent, lease=lease).result()

    def submit(
        self,
        session_id: str,
        records: Sequence[StoredInput],
        *,
        expected: int,
        parent: Origin | None = None,
        snapshot: Snapshot | None = None,
        lease: str | None = None,
    ) -> PendingCommit:
        """Hand ``records`` (and a ``snapshot`` taken at the last of them) to the store's writer; never blocks.

        The :class:`~effects.PendingCommit` returned is done once they are committed (durable: with
        ``synchronous="FULL"`` on SQLite), or holds the error (:class:`ConcurrencyError`, a
        :class:`StoreError`) that kept them out. Writes are committed in submission order. ``lease`` is
        the writer's lease token (:attr:`Lease.owner`): the write is refused (:class:`SessionLeased`)
        unless that lease is still the session's.
        """
        if not records and snapshot is None:
            raise ValueError(
                f"{type(self).__name__}.submit expected records or a snapshot for session {session_id!r}, got none"
            )
        return self._writer.submit(Append(session_id, records, expected, parent, snapshot, lease))

    @property
    def commits(self) -> int:
        """Transactions the writer committed so far (each carries the writes of any number of sessions)."""
        return self._writer.groups
