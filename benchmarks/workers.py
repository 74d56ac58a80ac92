"""Sessions as Temporal workflows: throughput with 1, 2 and 4 worker processes, and failover time.

A real PostgreSQL (Debian's binaries) and a real Temporal dev server (the
``temporal`` CLI of the ``dev`` extra) are started for the run, on loopback
ports. Worker processes are ``agent-core worker`` running the failover
scenario's agent (``tests/temporal/_failover_agent.py``): a scripted model and,
per session, three rounds of two parallel tool calls, then an answer.

* throughput: ``--sessions`` sessions are started and sent one message at
  once; the time from the first start to the last completed turn gives
  sessions/s and rounds/s (a round: one model call and its tool calls), with
  instant tools, for 1, 2 and 4 workers;
* failover: three workers, tools taking 0.1 s; once the first session's first round is
  under way one worker is killed with SIGKILL. Failover time is the longest any session
  that was under way waited, from the kill, for its next record in the log.

Run ``python benchmarks/workers.py`` (``--quick`` for a smoke run). Prints
tables, writes ``benchmarks/results/workers.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import table, write_results
from postgres_server import PostgresServer, binaries  # type: ignore[import-not-found]
from temporal_server import TemporalServer, binary, start_workers, stop_workers  # type: ignore[import-not-found]
from temporalio.client import Client

from agent_core import UserMessageReceived
from effects import PostgresStore, load_state
from effects.temporal import start_session, submit, turn_done

ROUNDS = 3  # the agent's rounds per session (tests/temporal/_failover_agent.py)


class Fleet(NamedTuple):
    """Running workers and what the benchmark talks to them with."""

    queue: str
    processes: list[subprocess.Popen[str]]
    store: PostgresStore
    client: Client


@asynccontextmanager
async def fleet(count: int, address: str, dsn: str, tool_seconds: float) -> AsyncIterator[Fleet]:
    """``count`` worker processes on a task queue of their own, a store and a client; the workers die after."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    env = {"AGENT_CORE_TOOL_SECONDS": str(tool_seconds)}
    processes = start_workers(count, address, dsn, queue, agent="temporal._failover_agent:agent", env=env)
    store = PostgresStore(dsn)
    try:
        yield Fleet(queue, processes, store, await Client.connect(address))
    finally:
        stop_workers(processes)
        store.close()


async def finish(fleet: Fleet, ids: list[str], seqs: list[int]) -> None:
    """Wait until every session's turn is done."""
    for session_id, seq in zip(ids, seqs, strict=True):
        await turn_done(fleet.store, session_id, seq)


async def begin(fleet: Fleet, ids: list[str]) -> list[int]:
    """Start the sessions and send each its message; the seq of each message."""

    async def one(i: int, session_id: str) -> int:
        await start_session(fleet.client, session_id, task_queue=fleet.queue, heartbeat_ms=2000)
        message = UserMessageReceived(timestamp=0, message_id="user-1", content=str(i))
        return await submit(fleet.client, session_id, message)

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(ids))))


async def throughput(address: str, dsn: str, workers: int, sessions: int) -> dict[str, Any]:
    async with fleet(workers, address, dsn, 0.0) as running:
        ids = [f"{running.queue}-{i}" for i in range(sessions)]
        started = time.perf_counter()
        await finish(running, ids, await begin(running, ids))
        seconds = time.perf_counter() - started
    return {
        "workers": workers,
        "sessions": sessions,
        "seconds": round(seconds, 2),
        "sessions_per_s": round(sessions / seconds, 2),
        "rounds_per_s": round(sessions * ROUNDS / seconds, 2),
    }


async def failover(address: str, dsn: str, sessions: int) -> dict[str, Any]:
    async with fleet(3, address, dsn, 0.1) as running:
        store = running.store
        ids = [f"{running.queue}-{i}" for i in range(sessions)]
        seqs = await begin(running, ids)
        await store.wait_for_inputs(ids[0], seqs[0] + 3)  # the first round is under way: kill now
        running.processes[0].send_signal(signal.SIGKILL)
        killed = time.perf_counter()
        lengths = [(s, store.session(s).length) for s in ids]
        # The state at the length read: a session that ends in between is not waited for.
        under_way = [(s, n) for s, n in lengths if load_state(store, s, n).turn is not None]

        async def resumed(session_id: str, length: int) -> float:
            await store.wait_for_inputs(session_id, length)
            return time.perf_counter() - killed

        waits = await asyncio.wait_for(asyncio.gather(*(resumed(s, n) for s, n in under_way)), timeout=300)
        await finish(running, ids, seqs)
        all_done = time.perf_counter() - killed
    return {
        "sessions": sessions,
        "under_way_at_kill": len(under_way),
        "failover_s": round(max(waits, default=0.0), 2),
        "median_resume_s": round(sorted(waits)[len(waits) // 2], 2) if waits else 0.0,
        "all_done_after_kill_s": round(all_done, 2),
    }


async def main_async(quick: bool) -> dict[str, Any]:
    found, cli = binaries(), binary()
    if found is None or cli is None:
        raise SystemExit("needs PostgreSQL's binaries and the `temporal` CLI (the dev extra)")
    postgres, temporal = PostgresServer(found, durable=True), TemporalServer(cli)
    try:
        postgres.start()
        await temporal.ready()
        sessions = 10 if quick else 40
        rows = []
        for workers in (1, 2, 4):
            rows.append(await throughput(temporal.address, postgres.dsn(), workers, sessions))
            print(f"  {workers} workers: {rows[-1]['seconds']} s", file=sys.stderr, flush=True)
        fail = await failover(temporal.address, postgres.dsn(), 10 if quick else 30)
    finally:
        temporal.stop()
        postgres.remove()
    return {"throughput": rows, "failover": fail, "cores": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sessions: a smoke run")
    results = asyncio.run(main_async(parser.parse_args().quick))
    cores = results["cores"]
    print(f"Sessions as Temporal workflows ({cores} cores: workers, Temporal and PostgreSQL share them)\n")
    headers = ("workers", "sessions", "seconds", "sessions/s", "rounds/s")
    rows = [
        (r["workers"], r["sessions"], r["seconds"], r["sessions_per_s"], r["rounds_per_s"])
        for r in results["throughput"]
    ]
    print(table(headers, rows))
    fail = results["failover"]
    print(
        f"\nfailover (3 workers, one killed with SIGKILL, {fail['under_way_at_kill']} of {fail['sessions']} sessions "
        f"under way): longest wait for the next record {fail['failover_s']} s, median {fail['median_resume_s']} s, "
        f"all done {fail['all_done_after_kill_s']} s after the kill"
    )
    print(f"\nwrote {write_results('workers', results)}")


if __name__ == "__main__":
    main()
