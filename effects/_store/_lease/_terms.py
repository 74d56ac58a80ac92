"""The terms a store grants leases on, and who a writer is: its name, its machine, its process."""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from .._records import Lease

DEFAULT_LEASE_MS = 30_000
"""How long a lease lasts after its last renewal: a writer that died leaves its sessions this long."""

DEFAULT_RENEW_MS = 10_000
"""How often a store renews the leases its sessions hold (a third of :data:`DEFAULT_LEASE_MS`)."""


@dataclass(frozen=True)
class LeaseTerms:
    """How a store grants leases: ``duration_ms`` from the last renewal, renewed every ``renew_every_ms``.

    ``clock`` gives the time in ms since the epoch; ``None`` (the default) is
    the store's own: the database server's for PostgreSQL (so machines whose
    clocks disagree judge a lease alike), this machine's for SQLite and
    memory. Tests pass a clock they move, instead of waiting for a lease to
    expire.
    """

    duration_ms: int = DEFAULT_LEASE_MS
    renew_every_ms: int = DEFAULT_RENEW_MS
    clock: Callable[[], int] | None = None

    def __post_init__(self) -> None:
        for name in ("duration_ms", "renew_every_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"LeaseTerms: expected a positive int of ms for {name}, got {value!r}")
        if self.renew_every_ms >= self.duration_ms:
            raise ValueError(
                f"LeaseTerms: renew_every_ms ({self.renew_every_ms}) must be shorter than duration_ms "
                f"({self.duration_ms}), or a live writer's lease would expire between renewals; "
                "a third of it is the usual choice"
            )


class Writer(NamedTuple):
    """Who takes a lease: ``name`` for messages (``pid 4242 on web-1``), the machine (see :func:`this_host`), the pid."""

    name: str
    host: str
    pid: int


def this_writer() -> Writer:
    """This process as a lease's holder."""
    pid = os.getpid()
    return Writer(f"pid {pid} on {socket.gethostname()}", this_host(), pid)


@functools.cache
def this_host() -> str:
    """What tells this machine's processes from others': the host name, the boot and the process namespace.

    Two processes see the same value only if their pids name processes of one
    table (same kernel, same boot, same pid namespace: containers sharing a
    host name differ). ``""`` where the kernel does not say (no ``/proc``): a
    holder there is never judged gone before its lease expires.
    """
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{socket.gethostname()} boot {boot} pid namespace {namespace}"


def writer_gone(lease: Lease) -> bool:
    """Whether the lease's holder is a process of this machine that no longer exists (killed, crashed).

    Such a lease need not be waited out: nobody can renew it. A holder on
    another machine, or whose machine cannot be told (``host`` empty), counts
    as alive until its lease expires. A pid reused by an unrelated process
    counts as alive too (the lease is then waited out: safe, only slower).
    """
    if not lease.host or lease.host != this_host() or lease.pid <= 0 or lease.pid == os.getpid():
        return False
    try:
        os.kill(lease.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by another user
        return False
    return False


LEASE_COLUMNS = "name, owner, holder, acquired_at, expires_at, host, pid"
"""The columns of a lease row, in the order :func:`lease_of` reads them (the same on every store)."""


def lease_of(row: Any) -> Lease:
    """A :class:`Lease` from a row of :data:`LEASE_COLUMNS`."""
    name, owner, holder, acquired_at, expires_at, host, pid = row
    return Lease(
        session_id=name, owner=owner, holder=holder, acquired_at=acquired_at, expires_at=expires_at, host=host, pid=pid
    )
