"""``LeaseKeeper``: the leases one store holds for the sessions it writes, and the thread that renews them.

A session opened for running (``open_session``) takes the session's lease
first: a row in the store naming a random token of this opener, who it is, and
when the lease expires. The keeper renews every lease of its store in one
statement every ``renew_every_ms``, on a thread of its own (so an event loop
that is busy, or blocked by a slow tool, does not lose its leases), and
releases a lease when its session closes. When a renewal finds a lease taken
over (it had expired: the process stalled, or the store was out of reach for
longer than the lease), the holder is told (``on_lost``), and the store refuses
that writer's appends from then on (fencing: each append carries the token).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from .._errors import SessionLeased, StoreError
from .._records import Lease
from ._terms import LeaseTerms, Writer, this_writer, writer_gone

logger = logging.getLogger("effects.store")

OnLost = Callable[[SessionLeased], object]
"""What a holder is told when its lease was taken over (called on the keeper's thread)."""


class LeaseBackend(Protocol):
    """The statements a store runs for its :class:`LeaseKeeper`, each atomic, on the store's clock (or ``terms.clock``)."""

    def take(self, session_id: str, owner: str, writer: Writer, free: Sequence[str], terms: LeaseTerms) -> Lease:
        """Record ``owner``'s lease (held by ``writer``) unless another owner's lease on the session is live; then
        raise :class:`SessionLeased` naming it. A lease whose owner is in ``free`` (its writer is gone) counts as
        expired, as does one of ``owner`` itself."""
        ...

    def extend(self, owners: Sequence[str], terms: LeaseTerms) -> set[str]:
        """Move these owners' leases to expire ``terms.duration_ms`` from now; return the owners that still held one."""
        ...

    def drop(self, owners: Sequence[str]) -> None:
        """Delete these owners' leases (a lease another owner took over is not theirs, and stays)."""
        ...

    def holder(self, session_id: str, terms: LeaseTerms) -> tuple[Lease | None, int]:
        """The session's lease (``None``: none), and the store's time now."""
        ...


class _Held(NamedTuple):
    lease: Lease
    on_lost: OnLost | None


class LeaseKeeper:
    """The leases a store holds, renewed together on one thread; see the module."""

    def __init__(self, backend: LeaseBackend, terms: LeaseTerms, name: str) -> None:
        self.terms = terms
        self._backend = backend
        self._name = name
        self._held: dict[str, _Held] = {}  # by owner token
        self._abandoned: dict[str, str] = {}  # owner token -> session: released here, not yet in the store
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self, session_id: str, on_lost: OnLost | None = None) -> Lease:
        """Take the session's lease for a new writer (see :meth:`LeaseBackend.take`); renewed until released.

        A lease held by a process of this machine that no longer exists (see
        :func:`writer_gone`) is taken over at once, without waiting it out.
        """
        with self._lock:
            free = [owner for owner, session in self._abandoned.items() if session == session_id]
        owner, writer = secrets.token_hex(16), this_writer()
        try:
            lease = self._backend.take(session_id, owner, writer, free, self.terms)
        except SessionLeased as refused:
            if refused.holder is None or not writer_gone(refused.holder):
                raise
            logger.info(
                "session %r: its writer, %s, is gone (no such process); taking its lease over before it expires",
                session_id, refused.holder.holder,
            )  # fmt: skip
            lease = self._backend.take(session_id, owner, writer, [*free, refused.holder.owner], self.terms)
        with self._lock:
            for owner in free:
                self._abandoned.pop(owner, None)
            self._held[lease.owner] = _Held(lease, on_lost)
            self._start()
        return lease

    def release(self, lease: Lease) -> None:
        """Give the lease back: the session may be opened at once. A store out of reach leaves the lease to expire,
        logged as a warning; this process may open the session again meanwhile, and releases it later."""
        with self._lock:
            self._held.pop(lease.owner, None)
        try:
            self._backend.drop([lease.owner])
        except StoreError as error:
            with self._lock:
                self._abandoned[lease.owner] = lease.session_id
                self._start()
            logger.warning(
                "session %r: could not release its lease (%s); another process may open the session once the "
                "lease expires (%d ms after its last renewal), this one at once",
                lease.session_id, error, self.terms.duration_ms,
            )  # fmt: skip

    def renew(self) -> None:
        """Renew every lease held now, in one statement; tell the holders of those taken over (``on_lost``).

        The keeper's thread calls it every ``renew_every_ms``. A store out of
        reach is logged and tried again at the next renewal: the writer keeps
        its lease unless another one takes it over meanwhile (the store refuses
        that writer's appends then, and the next renewal tells it).
        """
        with self._lock:
            held, abandoned = dict(self._held), list(self._abandoned)
        try:
            if abandoned:
                self._backend.drop(abandoned)
                with self._lock:
                    for owner in abandoned:
                        self._abandoned.pop(owner, None)
            kept = self._backend.extend(list(held), self.terms) if held else set()
        except StoreError as error:
            logger.warning(
                "%s: could not renew the leases of %d sessions (%s); trying again in %d ms",
                self._name, len(held), error, self.terms.renew_every_ms,
            )  # fmt: skip
            return
        for owner, (lease, on_lost) in held.items():
            if owner not in kept:
                self._lost(owner, lease, on_lost)

    def holder(self, session_id: str) -> Lease | None:
        """The session's lease as the store holds it now (``None``: nobody runs the session, or its writer left)."""
        lease, _now = self._backend.holder(session_id, self.terms)
        return lease

    def close(self) -> None:
        """Stop renewing and give back every lease still held (best effort: they expire anyway)."""
        self._stop.set()
        with self._lock:
            thread, self._thread = self._thread, None
            owners = [*self._held, *self._abandoned]
            self._held.clear()
            self._abandoned.clear()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        if owners:
            try:
                self._backend.drop(owners)
            except StoreError as error:
                logger.warning("%s: could not release %d leases at close (%s)", self._name, len(owners), error)

    def _lost(self, owner: str, lease: Lease, on_lost: OnLost | None) -> None:
        with self._lock:
            if self._held.pop(owner, None) is None:
                return  # released meanwhile: not lost
        try:
            holder, now = self._backend.holder(lease.session_id, self.terms)
        except StoreError:
            holder, now = None, lease.expires_at
        error = SessionLeased(lease.session_id, holder, now, taken=True)
        if on_lost is None:
            logger.warning("%s", error)
            return
        try:
            on_lost(error)
        except Exception:
            logger.exception("session %r: telling the writer that its lease was taken over raised", lease.session_id)

    def _start(self) -> None:
        """Start the renewing thread unless it runs (called with the lock held)."""
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._run, name=f"agent-core leases {self._name}", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.terms.renew_every_ms / 1000):
            with self._lock:
                if not self._held and not self._abandoned:
                    self._thread = None  # nothing to renew: the next acquire starts a thread again
                    return
            self.renew()


class LeasedStore:
    """The lease methods of :class:`SqliteStore`, :class:`PostgresStore` and :class:`MemoryStore`: each holds a
    :class:`LeaseKeeper` in ``_leases``."""

    _leases: LeaseKeeper

    def acquire_lease(self, session_id: str, *, on_lost: OnLost | None = None) -> Lease:
        """Take session ``session_id``'s lease for a new writer; raises :class:`SessionLeased` if another holds it.

        Another writer's lease counts until it expires: ``lease_terms.duration_ms``
        after its last renewal. The store renews the lease every
        ``lease_terms.renew_every_ms`` until :meth:`release_lease`. Pass the
        lease to the session's :class:`SessionJournal` (``lease=``): the store
        then refuses its appends once another writer took the lease over
        (``SessionLeased``, nothing written), and ``on_lost`` is called (on the
        store's thread) when a renewal finds it so. ``open_session`` does all of this.
        """
        return self._leases.acquire(session_id, on_lost)

    def release_lease(self, lease: Lease) -> None:
        """Give ``lease`` back: another writer may open the session at once."""
        self._leases.release(lease)

    def renew_leases(self) -> None:
        """Renew every lease this store holds, now (the store does it every ``lease_terms.renew_every_ms``)."""
        self._leases.renew()

    def lease(self, session_id: str) -> Lease | None:
        """The session's lease as the store holds it (``None``: no writer has it), expired or not."""
        return self._leases.holder(session_id)

    @property
    def lease_terms(self) -> LeaseTerms:
        """How long this store's leases last and how often it renews them."""
        return self._leases.terms
