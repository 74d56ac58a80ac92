"""Sessions as Temporal workflows: throughput beside one local process, submit latency, and failover time.

A real PostgreSQL (Debian's binaries) and a real Temporal dev server (the
``temporal`` CLI of the ``dev`` extra) are started for the run, on loopback
ports. Worker processes are ``agent-core worker`` running the failover
scenario's agent (``tests/temporal/_failover_agent.py``) with one round: per
session, a model call asking for two parallel tool calls, then a second model
call answering (two rounds: a round is one model call and its tool calls).

* throughput: ``--sessions`` sessions (200) are started and sent one message at
  once; the time from the first start to the last completed turn gives
  sessions/s and rounds/s, with instant tools, on ``--workers`` workers (4;
  ``--workers 1 2 4 8`` for several). Each worker count runs twice,
  interleaved: starting a session with ``start_session`` then ``submit``
  (three calls to the server), and with ``submit(start=True)`` (one
  update-with-start). A submit's latency is from the first call for its session
  to the sequence number returned. The same sessions run in one local process
  (``open_session`` on the same PostgreSQL, no Temporal) in the same run, for
  the distributed/local ratio;
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
import statistics
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

os.environ["AGENT_CORE_ROUNDS"] = "1"  # read by the agent, here and in the workers: two model calls, two tools
from temporal._failover_agent import agent, answer  # type: ignore[import-not-found]

from agent_core import UserMessageReceived
from effects import PostgresStore, load_state, open_session
from effects.temporal import start_session, submit, turn_done
from effects.testing import ScriptedModel

ROUNDS = 2  # model calls per session: one asks for the two tools, one answers


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


async def begin(
    fleet: Fleet, ids: list[str], with_start: bool = True, latencies: list[float] | None = None
) -> list[int]:
    """Start the sessions and send each its message; the seq of each message (and each one's latency)."""

    async def one(i: int, session_id: str) -> int:
        began = time.perf_counter()
        message = UserMessageReceived(timestamp=0, message_id="user-1", content=str(i))
        if with_start:
            seq = await submit(fleet.client, session_id, message, start=True, task_queue=fleet.queue, heartbeat_ms=2000)
        else:
            await start_session(fleet.client, session_id, task_queue=fleet.queue, heartbeat_ms=2000)
            seq = await submit(fleet.client, session_id, message)
        if latencies is not None:
            latencies.append(time.perf_counter() - began)
        return seq

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(ids))))


async def throughput(address: str, dsn: str, workers: int, sessions: int, with_start: bool) -> dict[str, Any]:
    latencies: list[float] = []
    async with fleet(workers, address, dsn, 0.0) as running:
        ids = [f"{running.queue}-{i}" for i in range(sessions)]
        started = time.perf_counter()
        seqs = await begin(running, ids, with_start, latencies)
        submitted = time.perf_counter() - started
        await finish(running, ids, seqs)
        seconds = time.perf_counter() - started
    return {
        "workers": workers,
        "start": "update-with-start" if with_start else "start+submit",
        "sessions": sessions,
        "seconds": round(seconds, 2),
        "submitting_s": round(submitted, 2),
        "submit_median_ms": round(1000 * statistics.median(latencies), 1),
        "sessions_per_s": round(sessions / seconds, 2),
        "rounds_per_s": round(sessions * ROUNDS / seconds, 2),
    }


async def local(dsn: str, sessions: int) -> dict[str, Any]:
    """The same sessions in one process on the same PostgreSQL, no Temporal: ``open_session`` each, concurrently."""
    store = PostgresStore(dsn)
    tools = [agent.toolbox[name] for name in agent.toolbox.names()]
    prefix = f"local-{uuid.uuid4().hex[:8]}"

    async def one(i: int) -> None:
        model = ScriptedModel(answer, keep_calls=False)
        async with open_session(store, f"{prefix}-{i}", model, tools=tools, config=agent.config) as session:
            session.send(str(i))
            await session.turn_done()

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(sessions)))
    seconds = time.perf_counter() - started
    store.close()
    return {
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


async def main_async(
    quick: bool, sessions: int, counts: list[int], modes: list[bool], with_failover: bool
) -> dict[str, Any]:
    found, cli = binaries(), binary()
    if found is None or cli is None:
        raise SystemExit("needs PostgreSQL's binaries and the `temporal` CLI (the dev extra)")
    postgres, temporal = PostgresServer(found, durable=True), TemporalServer(cli)
    sessions = 20 if quick else sessions
    try:
        postgres.start()
        await temporal.ready()
        one = await local(postgres.dsn(), sessions)
        print(f"  local: {one['seconds']} s", file=sys.stderr, flush=True)
        rows = []
        for workers in counts:
            for with_start in modes:
                rows.append(await throughput(temporal.address, postgres.dsn(), workers, sessions, with_start))
                rows[-1]["ratio"] = round(one["rounds_per_s"] / rows[-1]["rounds_per_s"], 1)
                print(f"  {workers} workers, {rows[-1]['start']}: {rows[-1]['seconds']} s", file=sys.stderr, flush=True)
        fail = await failover(temporal.address, postgres.dsn(), 10 if quick else 30) if with_failover else None
    finally:
        temporal.stop()
        postgres.remove()
    return {"local": one, "throughput": rows, "failover": fail, "cores": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sessions: a smoke run")
    parser.add_argument("--sessions", type=int, default=200, help="sessions per run (default 200)")
    parser.add_argument("--workers", type=int, nargs="+", default=[4], help="worker counts to run (default 4)")
    parser.add_argument(
        "--start", choices=("both", "with-start", "separate"), default="both", help="how sessions are started"
    )
    parser.add_argument("--failover", action="store_true", help="also kill a worker and time the failover")
    options = parser.parse_args()
    modes = {"both": [False, True], "with-start": [True], "separate": [False]}[options.start]
    results = asyncio.run(main_async(options.quick, options.sessions, options.workers, modes, options.failover))
    cores = results["cores"]
    print(f"Sessions as Temporal workflows ({cores} cores: workers, Temporal and PostgreSQL share them)\n")
    one = results["local"]
    headers = ("workers", "start", "sessions", "seconds", "submitting s", "submit median ms", "rounds/s", "local/this")
    rows = [
        ("local", "-", one["sessions"], one["seconds"], "-", "-", one["rounds_per_s"], 1.0),
        *(
            (r["workers"], r["start"], r["sessions"], r["seconds"], r["submitting_s"], r["submit_median_ms"],
             r["rounds_per_s"], r["ratio"])
            for r in results["throughput"]
        ),
    ]  # fmt: skip
    print(table(headers, rows))
    fail = results["failover"]
    if fail is None:
        print(f"\nwrote {write_results('workers', results)}")
        return
    print(
        f"\nfailover (3 workers, one killed with SIGKILL, {fail['under_way_at_kill']} of {fail['sessions']} sessions "
        f"under way): longest wait for the next record {fail['failover_s']} s, median {fail['median_resume_s']} s, "
        f"all done {fail['all_done_after_kill_s']} s after the kill"
    )
    print(f"\nwrote {write_results('workers', results)}")


if __name__ == "__main__":
    main()
