"""The lease statements of a PostgreSQL store (see ``LeaseKeeper``), on the server's clock unless the terms give one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._errors import SessionLeased
from .._lease import LEASE_COLUMNS, LeaseTerms, Writer, lease_of
from .._records import Lease
from ._schema import NOW_MS

COLUMNS = LEASE_COLUMNS


def leases_of(db: Any, names: Sequence[str], terms: LeaseTerms) -> tuple[dict[str, Lease], int]:
    """The leases of the named sessions that have one, locked against a takeover until the transaction ends (``FOR
    SHARE``: a taker waits for the commit, then finds the records), and the time now."""
    rows = db.execute(
        f"SELECT {NOW_MS}, l.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT {COLUMNS} FROM agent_core_leases "
        "WHERE name = ANY(%(names)s) ORDER BY name FOR SHARE) AS l ON true",
        {**clock_of(terms), "names": list(names)},
    ).fetchall()
    leases = {row[1]: lease_of(row[1:]) for row in rows if row[1] is not None}
    return leases, int(rows[0][0])


def clock_of(terms: LeaseTerms) -> dict[str, int | None]:
    """The ``now`` parameter of :data:`NOW_MS`: the terms' clock, else ``None`` (the server's clock)."""
    return {"now": None if terms.clock is None else terms.clock()}


class PostgresLeases:
    """A :class:`~effects._store._lease.LeaseBackend` running on a store's read connection (``run``: under its lock,
    once more on a new connection if the server dropped it; every statement here is safe to run twice)."""

    def __init__(self, run: Callable[[Callable[[Any], Any]], Any]) -> None:
        self._run = run

    def take(self, session_id: str, owner: str, writer: Writer, free: Sequence[str], terms: LeaseTerms) -> Lease:
        """See :meth:`LeaseBackend.take`: one statement, taking the row unless another owner's lease is live."""
        params = {
            **clock_of(terms),
            "name": session_id,
            "owner": owner,
            "holder": writer.name,
            "host": writer.host,
            "pid": writer.pid,
            "duration": terms.duration_ms,
            "free": list(free),
        }
        statement = (
            f"WITH t AS (SELECT {NOW_MS} AS now) "
            f"INSERT INTO agent_core_leases AS l ({COLUMNS}) "
            "SELECT %(name)s, %(owner)s, %(holder)s, t.now, t.now + %(duration)s, %(host)s, %(pid)s FROM t "
            "ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, holder = EXCLUDED.holder, "
            "acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at, host = EXCLUDED.host, "
            "pid = EXCLUDED.pid "
            "WHERE l.expires_at <= EXCLUDED.acquired_at OR l.owner = EXCLUDED.owner OR l.owner = ANY(%(free)s) "
            f"RETURNING {COLUMNS}"
        )
        while True:
            row = self._run(lambda db: db.execute(statement, params).fetchone())
            if row is not None:
                return lease_of(row)
            held, now = self.holder(session_id, terms)
            if held is not None:  # else released in between: take it again
                raise SessionLeased(session_id, held, now)

    def extend(self, owners: Sequence[str], terms: LeaseTerms) -> set[str]:
        """See :meth:`LeaseBackend.extend`."""
        rows = self._run(
            lambda db: db.execute(
                f"UPDATE agent_core_leases SET expires_at = {NOW_MS} + %(duration)s "
                "WHERE owner = ANY(%(owners)s) RETURNING owner",
                {**clock_of(terms), "duration": terms.duration_ms, "owners": list(owners)},
            ).fetchall()
        )
        return {owner for (owner,) in rows}

    def drop(self, owners: Sequence[str]) -> None:
        """See :meth:`LeaseBackend.drop`."""
        self._run(lambda db: db.execute("DELETE FROM agent_core_leases WHERE owner = ANY(%s)", (list(owners),)))

    def holder(self, session_id: str, terms: LeaseTerms) -> tuple[Lease | None, int]:
        """See :meth:`LeaseBackend.holder`; a store older than leases (opened read-only) has none."""
        row = self._run(
            lambda db: (
                db.execute(
                    f"SELECT {NOW_MS}, l.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT {COLUMNS} "
                    "FROM agent_core_leases WHERE name = %(name)s) AS l ON true",
                    {**clock_of(terms), "name": session_id},
                ).fetchone()
                if db.execute("SELECT to_regclass('agent_core_leases') IS NOT NULL").fetchone()[0]
                else (db.execute(f"SELECT {NOW_MS}", clock_of(terms)).fetchone()[0], None)
            )
        )
        now, *lease = row
        return (None if lease[0] is None else lease_of(lease)), int(now)
