"""``MemoryStore``: an event store in a dict, for tests and short-lived sessions."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from ._errors import SessionNotFound
from ._integrity import check_continues, check_snapshot
from ._records import Origin, SessionInfo, Snapshot, StoredInput, timestamp_of


class _Log:
    def __init__(self, parent: Origin | None) -> None:
        self.parent = parent
        self.records: list[StoredInput] = []
        self.snapshots: list[Snapshot] = []


class MemoryStore:
    """An :class:`EventStore` held in memory. Same rules as :class:`SqliteStore`, nothing survives the process.

    ``keep_snapshots`` is how many snapshots per session are kept (the newest).
    Safe to share between threads.
    """

    def __init__(self, *, keep_snapshots: int = 1) -> None:
        self._logs: dict[str, _Log] = {}
        self._keep = max(1, keep_snapshots)
        self._lock = threading.Lock()

    def append(
        self, session_id: str, records: Sequence[StoredInput], *, expected: int, parent: Origin | None = None
    ) -> None:
        """Append ``records`` if the session has ``expected`` inputs (see :class:`EventStore`)."""
        with self._lock:
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
        """Nothing to release."""

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
