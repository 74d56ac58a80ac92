"""``BudgetPools``: money budgets shared by sessions, processes and machines, kept in a database.

A pool is a key the user chooses (a tenant and a day: ``"acme:2026-11-27"``)
with a cap in nano-units (see :func:`agent_core.nanos`). A session names its
pool in ``AgentConfig(budget_pool=...)``; before each model call it
*reserves* ``per_call`` from the pool, in one transaction that sees every
other process's reservations:

* granted when what the pool spent, plus what running calls hold, plus this
  reservation stays within the cap; the hold lasts until the call ends, or
  ``hold_ms`` at most (a process that dies holding it frees it then);
* refused otherwise, and the turn fails with reason ``budget-pool``.

The verdict enters the session's log (``pool-verdict-received``), so a replay
needs no pool. When the call ends its hold is *settled*: the call's cost (the
reservation itself when the call could not be priced) is added to the pool's
``spent``, before the reply enters the log; a call that failed or was
cancelled releases its hold. A call whose cost passes its reservation
overspends the cap by at most that difference: reserve what one call may cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import anyio.to_thread
import msgspec

from agent_core import format_nanos

from ._postgres import PostgresLedger
from ._sqlite import SqliteLedger

DEFAULT_HOLD_MS = 660_000
"""How long a reservation is held at most by default: the default model timeout (10 minutes) and a minute."""


class PoolAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """A pool's answer to a reservation; ``detail`` says what the pool held when it refused."""

    granted: bool
    detail: str = ""


class PoolTotals(msgspec.Struct, frozen=True, kw_only=True):
    """A pool's cap, what its settled calls spent and what running calls hold now (nano-units)."""

    cap: int
    spent: int
    held: int


class _Ledger(Protocol):
    placeholder: str
    where: str

    def transaction(self) -> Any: ...
    def lock_pool(self, db: Any, pool: str) -> tuple[int, int] | None: ...
    def close(self) -> None: ...


class BudgetPools:
    """Budget pools in a database; open with :meth:`sqlite` or :meth:`postgres` and pass to ``Agent(pools=...)``.

    ``per_call`` is what each model call reserves (nano-units; what one call
    may cost at most), ``hold_ms`` how long a reservation is held before it
    expires. Every method is safe to call from many sessions and processes.
    """

    def __init__(self, ledger: _Ledger, *, per_call: int, hold_ms: int = DEFAULT_HOLD_MS) -> None:
        if per_call < 0 or hold_ms <= 0:
            raise ValueError(f"expected per_call >= 0 and hold_ms > 0, got per_call={per_call}, hold_ms={hold_ms}")
        self._ledger = ledger
        self.per_call = per_call
        self.hold_ms = hold_ms
        self._p = ledger.placeholder

    @classmethod
    def sqlite(cls, path: str | Path, *, per_call: int, hold_ms: int = DEFAULT_HOLD_MS) -> BudgetPools:
        """Pools in the SQLite file ``path`` (created if missing), shared by the processes of one machine."""
        return cls(SqliteLedger(path), per_call=per_call, hold_ms=hold_ms)

    @classmethod
    def postgres(cls, dsn: str, *, per_call: int, hold_ms: int = DEFAULT_HOLD_MS) -> BudgetPools:
        """Pools in the PostgreSQL database at ``dsn`` (the ``postgres`` extra), shared by many machines."""
        return cls(PostgresLedger(dsn), per_call=per_call, hold_ms=hold_ms)

    def close(self) -> None:
        """Close the database connection."""
        self._ledger.close()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self._p)

    # --- administration (synchronous) --------------------------------------------------------

    def set_cap(self, pool: str, cap: int) -> None:
        """Create ``pool`` with ``cap`` nano-units, or change its cap (what it spent is kept)."""
        if not pool or cap < 0:
            raise ValueError(f"expected a pool name and a cap of 0 or more, got {pool!r} and {cap}")
        with self._ledger.transaction() as db:
            if self._ledger.lock_pool(db, pool) is None:
                db.execute(self._sql("INSERT INTO agent_core_budget_pools (pool, cap, spent) VALUES (?, ?, 0)"), (pool, cap))
            else:
                db.execute(self._sql("UPDATE agent_core_budget_pools SET cap = ? WHERE pool = ?"), (cap, pool))

    def totals(self, pool: str, now_ms: int) -> PoolTotals:
        """``pool``'s cap, what it spent, and what unexpired reservations hold at ``now_ms``."""
        with self._ledger.transaction() as db:
            found = self._ledger.lock_pool(db, pool)
            if found is None:
                raise KeyError(f"budget pool {pool!r} does not exist; create it with set_cap")
            return PoolTotals(cap=found[0], spent=found[1], held=self._held(db, pool, now_ms))

    def _held(self, db: Any, pool: str, now_ms: int) -> int:
        row = db.execute(
            self._sql("SELECT COALESCE(SUM(amount), 0) FROM agent_core_budget_holds WHERE pool = ? AND expires_at > ?"),
            (pool, now_ms),
        ).fetchone()
        return int(row[0])

    # --- what a model call does (in a worker thread: never blocks the event loop) ---------------

    async def reserve(self, pool: str, reservation_id: str, now_ms: int) -> PoolAnswer:
        """Hold ``per_call`` in ``pool`` for a model call about to start, if the cap allows it."""
        return await anyio.to_thread.run_sync(self._reserve, pool, reservation_id, now_ms)

    async def settle(self, pool: str, reservation_id: str, cost: int) -> None:
        """A call ended costing ``cost``: add it to what ``pool`` spent and drop its hold (expired or not)."""
        await anyio.to_thread.run_sync(self._settle, pool, reservation_id, cost)

    async def release(self, pool: str, reservation_id: str) -> None:
        """A call failed or was cancelled before it cost anything known: drop its hold."""
        await anyio.to_thread.run_sync(self._release, reservation_id)

    def _reserve(self, pool: str, reservation_id: str, now_ms: int) -> PoolAnswer:
        amount = self.per_call
        with self._ledger.transaction() as db:
            found = self._ledger.lock_pool(db, pool)
            if found is None:
                return PoolAnswer(granted=False, detail=f"budget pool {pool!r} does not exist (no cap was set)")
            cap, spent = found
            db.execute(self._sql("DELETE FROM agent_core_budget_holds WHERE pool = ? AND expires_at <= ?"), (pool, now_ms))
            held = self._held(db, pool, now_ms)
            if spent + held + amount > cap:
                detail = (
                    f"budget pool {pool!r} has {format_nanos(max(cap - spent - held, 0))} left of its "
                    f"{format_nanos(cap)} ({format_nanos(spent)} spent, {format_nanos(held)} held by running calls); "
                    f"a model call reserves {format_nanos(amount)}"
                )
                return PoolAnswer(granted=False, detail=detail)
            db.execute(
                self._sql(
                    "INSERT INTO agent_core_budget_holds (reservation_id, pool, amount, expires_at) VALUES (?, ?, ?, ?) "
                    # The same id again (a resumed session's id source repeating itself): the one call's hold.
                    "ON CONFLICT (reservation_id) DO UPDATE SET pool = excluded.pool, amount = excluded.amount, "
                    "expires_at = excluded.expires_at"
                ),
                (reservation_id, pool, amount, now_ms + self.hold_ms),
            )
            return PoolAnswer(granted=True)

    def _settle(self, pool: str, reservation_id: str, cost: int) -> None:
        with self._ledger.transaction() as db:
            self._ledger.lock_pool(db, pool)
            db.execute(self._sql("DELETE FROM agent_core_budget_holds WHERE reservation_id = ?"), (reservation_id,))
            db.execute(self._sql("UPDATE agent_core_budget_pools SET spent = spent + ? WHERE pool = ?"), (cost, pool))

    def _release(self, reservation_id: str) -> None:
        with self._ledger.transaction() as db:
            db.execute(self._sql("DELETE FROM agent_core_budget_holds WHERE reservation_id = ?"), (reservation_id,))
