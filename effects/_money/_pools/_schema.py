"""The budget pools' tables, the same in SQLite and PostgreSQL.

``agent_core_budget_pools``: a pool's ``cap`` and what its settled calls
``spent`` (nano-units). ``agent_core_budget_holds``: the reservations of calls
still running, each until ``expires_at`` (ms since the epoch): a hold whose
process died is ignored and deleted once expired.
"""

TABLES = (
    "CREATE TABLE IF NOT EXISTS agent_core_budget_pools ("
    "pool TEXT PRIMARY KEY, cap BIGINT NOT NULL, spent BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS agent_core_budget_holds ("
    "reservation_id TEXT PRIMARY KEY, pool TEXT NOT NULL, amount BIGINT NOT NULL, expires_at BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS agent_core_budget_holds_pool ON agent_core_budget_holds (pool, expires_at)",
)
