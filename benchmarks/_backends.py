"""The store phase that puts PostgreSQL beside SQLite: the runner's workload live on each, then resume.

PostgreSQL runs from Debian's binaries in a temporary folder (``tests/postgres_server.py``)
with its durable defaults (fsync on), as SQLite runs with ``synchronous=FULL``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _durable import concurrent_durable
from postgres_server import PostgresServer, binaries  # type: ignore[import-not-found]

from effects import EventStore, PostgresStore, SessionJournal, SqliteStore, load_state

Opener = Callable[[], EventStore]


def backends(rounds: int, directory: Path, live_session: Any, file_bytes: Callable[[Path], int]) -> dict[str, Any]:
    """``{"sqlite": row, "postgres": row or {"skipped": why}}`` for the workload of ``rounds`` rounds."""
    path = directory / "backend.db"
    out: dict[str, Any] = {"rounds": rounds}
    out["sqlite"] = measure(lambda: SqliteStore(path), rounds, live_session, lambda: file_bytes(path))
    found = binaries()
    if found is None:
        out["postgres"] = {"skipped": "no PostgreSQL server binaries (initdb, pg_ctl)"}
        return out
    server = PostgresServer(found, durable=True)
    try:
        server.start()
        dsn = server.dsn()
        out["postgres"] = measure(lambda: PostgresStore(dsn), rounds, live_session, lambda: postgres_bytes(dsn))
    finally:
        server.remove()
    return out


def postgres_durable(sessions: int, turns: int, directory: Path) -> dict[str, Any]:
    """:func:`concurrent_durable` on a PostgreSQL server with fsync on: group commit against one commit per batch."""
    import psycopg

    found = binaries()
    if found is None:
        return {"skipped": "no PostgreSQL server binaries (initdb, pg_ctl)"}
    server = PostgresServer(found, durable=True)
    try:
        server.start()

        def fresh(group_commit: bool, index: int) -> PostgresStore:
            with psycopg.connect(server.dsn(), autocommit=True) as db:
                db.execute(f"CREATE DATABASE durable_{index}")
            return PostgresStore(server.dsn(f"durable_{index}"), group_commit=group_commit)

        return concurrent_durable(sessions, turns, directory, fresh, configurations=2)
    finally:
        server.remove()


def measure(opener: Opener, rounds: int, live_session: Any, size: Callable[[], int]) -> dict[str, Any]:
    """Run the workload live on ``opener()``'s store; time the commits, then resume it."""
    start = time.perf_counter()
    timed = anyio.run(live_session, opener, rounds)
    seconds = time.perf_counter() - start
    inputs = sum(len(batch) for batch in timed.batches)
    latencies = sorted(timed.latencies_ms)

    def reopen() -> None:
        store = opener()
        SessionJournal.open(store, "bench")  # what a resume does: snapshot, tail, and the whole chain checked
        store.close()

    store = opener()
    return {
        "inputs": inputs,
        "commits": len(timed.batches),
        "inputs_per_second": inputs / seconds,
        "commit_ms_median": statistics.median(latencies),
        "commit_ms_p99": latencies[int(len(latencies) * 0.99)],
        "resume_ms": _best(lambda: load_state(store, "bench"), 20),
        "open_for_append_ms": _best(reopen, 10),
        "bytes_per_round": size() / rounds,
    }


def postgres_bytes(dsn: str) -> int:
    """Bytes the store's tables take on the server (rows, indexes, TOAST), after a VACUUM."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("VACUUM agent_core_sessions, agent_core_inputs, agent_core_snapshots")
        row = db.execute(
            "SELECT sum(pg_total_relation_size(t)) FROM unnest(ARRAY['agent_core_sessions', 'agent_core_inputs', "
            "'agent_core_snapshots']) AS t"
        ).fetchone()
    return int(row[0]) if row else 0


def _best(run: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        begun = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - begun) / 1e6)
    return min(samples)


def report_backends(result: dict[str, Any], table: Callable[..., str]) -> None:
    """The SQLite / PostgreSQL table."""
    print(f"\nThe same workload ({result['rounds']:,} rounds) on each store, durable commits\n")
    rows = []
    for name in ("sqlite", "postgres"):
        r = result[name]
        if "skipped" in r:
            rows.append((name, r["skipped"], "", "", "", "", ""))
            continue
        rows.append(
            (
                name,
                f"{r['inputs_per_second']:,.0f}",
                f"{r['commit_ms_median']:.3f}",
                f"{r['commit_ms_p99']:.3f}",
                f"{r['resume_ms']:.2f}",
                f"{r['open_for_append_ms']:.2f}",
                f"{r['bytes_per_round']:,.0f}",
            )
        )
    headers = ("store", "inputs/s", "commit ms", "p99 ms", "resume ms", "open for append ms", "bytes/round")
    print(table(headers, rows))
