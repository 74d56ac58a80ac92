"""``MemoryStore``: an event store in a dict, for tests and short-lived sessions."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

from msgspec.structs import replace

from ._errors import SessionLeased, SessionNotFound
from ._integrity import check_continues, check_lease, check_snapshot
from ._lease import LeasedStore, LeaseKeeper, LeaseTerms, Writer
from ._records import Append, Lease, Origin, SessionInfo, Snapshot, StoredInput, timestamp_of


class _Log:
    def __init__(self, parent: Origin | None) -> None:
        self.parent = parent
        self.records: list[StoredInput] = []
        self.snapshots: list[Snapshot] = []


class _MemoryLeases:
    """The leases of a :class:`MemoryStore`, in a dict (a :class:`~effects._store._lease.LeaseBackend`)."""

    def __init__(self, lock: threading.Lock) -> None:
        self.leases: dict[str, Lease] = {}
        self._lock = lock

    @staticmethod
    def now(terms: LeaseTerms) -> int:
        return terms.clock() if terms.clock is not None else time.time_ns() // 1_000_000

    def take(self, session_id: str, owner: str, writer: Writer, free: Sequence[str], terms: LeaseTerms) -> Lease:
        with self._lock:
            now, held = self.now(terms), self.leases.get(session_id)
            if held is not None and held.owner != owner and held.owner not in free and held.expires_at > now:
                raise SessionLeased(session_id, held, now)
            lease = Lease(
                session_id=session_id,
                owner=owner,
                holder=writer.name,
                acquired_at=now,
                expires_at=now + terms.duration_ms,
                host=writer.host,
                pid=writer.pid,
            )
            self.leases[session_id] = lease
            return lease

    def extend(self, owners: Sequence[str], terms: LeaseTerms) -> set[str]:
        with self._lock:
            wanted, expires_at = set(owners), self.now(terms) + terms.duration_ms
            kept = {name: lease for name, lease in self.leases.items() if lease.owner in wanted}
            for name, lease in kept.items():
                self.leases[name] = replace(lease, expires_at=expires_at)
            return {lease.owner for lease in kept.values()}

    def drop(self, owners: Sequence[str]) -> None:
        with self._lock:
            gone = set(owners)
            self.leases = {name: lease for name, lease in self.leases.items() if lease.owner not in gone}

    def holder(self, session_id: str, terms: LeaseTerms) -> tuple[Lease | None, int]:
        with self._lock:
            return self.leases.get(session_id), self.now(terms)


class MemoryStore(LeasedStore):
    """An :class:`EventStore` held in memory. Same rules as :class:`SqliteStore`, nothing survives the process.

    ``keep_snapshots`` is how many snapshots per session are kept (the newest).
    Leases (``lease_terms``) work as in the other stores, within the process.
    Safe to share between threads.
    """

    def __init__(self, *, keep_snapshots: int = 1, lease_terms: LeaseTerms | None = None) -> None:
        self._logs: dict[str, _Log] = {}
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()
        self._lease_table = _MemoryLeases(threading.Lock())
        self._leases = LeaseKeeper(self._lease_table, lease_terms or LeaseTerms(), "memory store")

    def append(
        self,
        session_id: str,
        records: Sequence[StoredInput],
        *,
        expected: int,
        parent: Origin | None = None,
        lease: str | None = None,
    ) -> None:
        """Append ``records`` if the session has ``expected`` inputs (see :class:`EventStore`), and, with a ``lease``
        token, if that lease is still the session's (see :meth:`acquire_lease`)."""
        with self._lock:
            if lease is not None:
                terms = self._leases.terms
                held, now = self._lease_table.holder(session_id, terms)
                check_lease(Append(session_id, records, expected, lease=lease), held, now)
            log = self._logs.get(session_id)
            stored = None if log is None or not log.records else (len(log.records), log.records[-1].hash)
            check_continues(session_id, records, expected, stored)
            if log is None:
                log = self._logs[session_id] = _Log(parent)
            log.records.extend(records)

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        """The records with ``start <= seq <= stop``, in order."""
        records = self._log(session_id).records
        end = len(records) if stop is None else min(stop, len(records))
        return iter(records[max(start, 1) - 1 : end])

    def session(self, session_id: str) -> SessionInfo:
        """One session's metadata."""
        return self._info(session_id, self._log(session_id))

    def sessions(self) -> list[SessionInfo]:
        """Every session, in creation order."""
        with self._lock:
            logs = list(self._logs.items())
        return [self._info(session_id, log) for session_id, log in logs]

    def sessions_page(self, prefix: str, offset: int, limit: int | None) -> tuple[list[SessionInfo], int]:
        """See :func:`~effects.sessions_page`."""
        with self._lock:
            logs = [(session_id, log) for session_id, log in self._logs.items() if session_id.startswith(prefix)]
        page = logs[offset : None if limit is None else offset + limit]
        return [self._info(session_id, log) for session_id, log in page], len(logs)

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot``; only the newest ``keep_snapshots`` stay."""
        with self._lock:
            log = self._log(session_id)
            check_snapshot(session_id, snapshot.seq, len(log.records))
            kept = [s for s in log.snapshots if s.seq != snapshot.seq] + [snapshot]
            log.snapshots = sorted(kept, key=lambda s: s.seq)[-self._keep :]

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest snapshot at or before ``at_most``."""
        fitting = [s for s in self._log(session_id).snapshots if at_most is None or s.seq <= at_most]
        return fitting[-1] if fitting else None

    def close(self) -> None:
        """Stop renewing leases (the logs stay readable)."""
        self._leases.close()

    def _log(self, session_id: str) -> _Log:
        log = self._logs.get(session_id)
        if log is None:
            raise SessionNotFound(session_id, len(self._logs))
        return log

    @staticmethod
    def _info(session_id: str, log: _Log) -> SessionInfo:
        records = log.records
        return SessionInfo(
            session_id=session_id,
            length=len(records),
            head=records[-1].hash,
            first_timestamp=timestamp_of(records[0].data),
            last_timestamp=timestamp_of(records[-1].data),
            parent=log.parent,
        )
