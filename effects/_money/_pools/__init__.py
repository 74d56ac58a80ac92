"""Budget pools shared by sessions, kept in a database (SQLite or PostgreSQL)."""

from ._pools import DEFAULT_HOLD_MS, BudgetPools, PoolAnswer, PoolTotals

__all__ = ["DEFAULT_HOLD_MS", "BudgetPools", "PoolAnswer", "PoolTotals"]
