"""The ``EventStore`` protocol: what the log needs from a storage backend."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from ._errors import SessionNotFound
from ._records import Origin, SessionInfo, Snapshot, StoredInput


class EventStore(Protocol):
    """Append-only logs of encoded inputs, one per session, plus snapshots (caches of states).

    A store does not interpret inputs: hashing, folding and verification live
    above it (:class:`SessionJournal`, :func:`load_session`,
    :func:`replay_session`), so a backend is small. Implementations:
    :class:`SqliteStore` (the default, one file), :class:`PostgresStore` (one log for
    many machines) and :class:`MemoryStore` (tests); :func:`open_store` picks one from a path or a URL.
    """

    def append(
        self, session_id: str, records: Sequence[StoredInput], *, expected: int, parent: Origin | None = None
    ) -> None:
        """Append ``records`` atomically (one transaction), if the session has exactly ``expected`` inputs.

        ``expected=0`` creates the session (with ``parent`` when it is a fork).
        Raises :class:`ConcurrencyError` when the session's length is not
        ``expected`` (another writer came first), or when the first record's
        chain hash does not follow the session's last record (``diverged``:
        a writer whose earlier batch was refused); then nothing is written.
        The records' ``seq`` must continue the log (``expected + 1``, ...).
        """
        ...

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        """The records with ``start <= seq <= stop`` (``stop=None``: to the end), in order.

        Raises :class:`SessionNotFound` for an unknown session.
        """
        ...

    def session(self, session_id: str) -> SessionInfo:
        """One session's metadata; raises :class:`SessionNotFound`."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """Every session, oldest first.

        Listing a page or a tree goes through :func:`sessions_page`: a store
        with a method ``sessions_page(prefix, offset, limit)`` returning the
        same as that function reads only the sessions asked for (the stores
        here do); one without it is listed whole.
        """
        ...

    def save_snapshot(self, session_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` for the session, replacing older ones beyond the store's retention.

        Keep every field, ``anchor`` included: :meth:`load_snapshot` returns them
        as saved. The loader uses a snapshot only if the log's record ``seq`` has
        the chain hash ``anchor``; a store that drops the anchor (returns ``None``)
        makes its snapshots trusted as older releases trusted them.
        """
        ...

    def load_snapshot(self, session_id: str, at_most: int | None = None) -> Snapshot | None:
        """The latest snapshot with ``seq <= at_most`` (``None``: the latest), or ``None``."""
        ...

    def close(self) -> None:
        """Release the store's resources. Further calls are errors."""
        ...


def session_exists(store: EventStore, session_id: str) -> bool:
    """Whether ``store`` holds a session named ``session_id``."""
    try:
        store.session(session_id)
    except SessionNotFound:
        return False
    return True


SQL_INT_MAX = 2**63 - 1
"""The largest integer SQLite and PostgreSQL hold: the bound of a page's offset and limit."""


def sessions_page(
    store: EventStore, *, prefix: str = "", offset: int = 0, limit: int | None = None
) -> tuple[list[SessionInfo], int]:
    """The sessions whose ids start with ``prefix``, oldest first, ``offset`` on, at most ``limit`` of them
    (``None``: all), and how many such sessions the store holds.

    The stores here answer it themselves, reading only those sessions (a
    viewer's page of a store of millions reads one page); any other store
    lists every session and slices.
    """
    if not 0 <= offset <= SQL_INT_MAX or (limit is not None and not 0 <= limit <= SQL_INT_MAX):
        raise ValueError(
            f"expected an offset and a limit from 0 to {SQL_INT_MAX:,} (the largest integer SQL stores hold), "
            f"got offset={offset}, limit={limit}"
        )
    own = getattr(store, "sessions_page", None)
    if own is not None:
        page: tuple[list[SessionInfo], int] = own(prefix, offset, limit)
        return page
    named = [info for info in store.sessions() if info.session_id.startswith(prefix)]
    return named[offset : None if limit is None else offset + limit], len(named)
