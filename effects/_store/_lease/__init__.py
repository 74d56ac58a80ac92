"""One writer per session: the lease a session's writer holds in the store, its terms, and the keeper that
renews a store's leases."""

from ._keeper import LeaseBackend, LeasedStore, LeaseKeeper, OnLost
from ._terms import (
    DEFAULT_LEASE_MS,
    DEFAULT_RENEW_MS,
    LEASE_COLUMNS,
    LeaseTerms,
    Writer,
    lease_of,
    this_writer,
    writer_gone,
)

__all__ = [
    "DEFAULT_LEASE_MS",
    "DEFAULT_RENEW_MS",
    "LEASE_COLUMNS",
    "LeaseBackend",
    "LeaseKeeper",
    "LeaseTerms",
    "LeasedStore",
    "OnLost",
    "Writer",
    "lease_of",
    "this_writer",
    "writer_gone",
]
