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
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import table, write_results
from _cpu import Meter, Usage, thread_seconds
from postgres_server import PostgresServer, binaries  # type: ignore[import-not-found]
from temporal_server import TemporalServer, binary, start_workers, stop_workers  # type: ignore[import-not-found]
from temporalio.client import Client

os.environ["AGENT_CORE_ROUNDS"] = "1"  # read by the agent, here and in the workers: two model calls, two tools
from temporal._failover_agent import agent, answer  # type: ignore[import-not-found]

from agent_core import InvalidInput, UserMessageReceived
from effects import PostgresStore, load_state, open_session
from effects.temporal import start_session, submit, turn_done
from effects.testing import ScriptedModel

ROUNDS = 2  # model calls per session: one asks for the two tools, one answers


PROFILED = Path(__file__).resolve().parent / "_profiled"  # its sitecustomize profiles a worker that asks
GROUPS = ("benchmark", "workers", "temporal", "postgres")  # the process groups whose CPU is measured


class Servers(NamedTuple):
    """The servers of the run: where to reach them, and their process ids (for their CPU time)."""

    address: str
    dsn: str
    temporal_pid: int
    postgres_pid: int


class Fleet(NamedTuple):
    """Running workers and what the benchmark talks to them with."""

    queue: str
    processes: list[subprocess.Popen[str]]
    store: PostgresStore
    client: Client


@asynccontextmanager
async def fleet(
    count: int, address: str, dsn: str, tool_seconds: float, profile: str | None = None
) -> AsyncIterator[Fleet]:
    """``count`` worker processes on a task queue of their own, a store and a client; the workers die after.

    With ``profile`` (a path prefix) each worker runs under ``cProfile`` and
    writes ``PREFIX.<pid>`` as it stops (on SIGTERM, not killed).
    """
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    env = {"AGENT_CORE_TOOL_SECONDS": str(tool_seconds)}
    if profile is not None:
        tests = Path(__file__).resolve().parent.parent / "tests"
        env |= {"AGENT_CORE_PROFILE": profile, "PYTHONPATH": f"{tests}{os.pathsep}{PROFILED}"}
    processes = start_workers(count, address, dsn, queue, agent="temporal._failover_agent:agent", env=env)
    store = PostgresStore(dsn)
    try:
        yield Fleet(queue, processes, store, await Client.connect(address))
    finally:
        if profile is not None:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=60)
        stop_workers(processes)
        store.close()


async def finish(fleet: Fleet, ids: list[str], seqs: list[int | None]) -> None:
    """Wait until every session's turn is done (not those whose input was refused)."""
    for session_id, seq in zip(ids, seqs, strict=True):
        if seq is not None:
            await turn_done(fleet.store, session_id, seq)


async def begin(
    fleet: Fleet,
    ids: list[str],
    with_start: bool = True,
    latencies: list[float] | None = None,
    refused: list[str] | None = None,
) -> list[int | None]:
    """Start the sessions and send each its message; the seq of each message (and each one's latency).

    With ``refused``, a session that refuses its message gets ``None`` and the
    reason is kept there (else it raises): a message sent again after the
    server aborted its Update can find itself in the log already.
    """

    async def one(i: int, session_id: str) -> int | None:
        began = time.perf_counter()
        message = UserMessageReceived(timestamp=0, message_id="user-1", content=str(i))
        try:
            if with_start:
                seq = await submit(
                    fleet.client, session_id, message, start=True, task_queue=fleet.queue, heartbeat_ms=2000
                )
            else:
                await start_session(fleet.client, session_id, task_queue=fleet.queue, heartbeat_ms=2000)
                seq = await submit(fleet.client, session_id, message)
        except InvalidInput as error:
            if refused is None:
                raise
            refused.append(f"{session_id}: {error}")
            return None
        if latencies is not None:
            latencies.append(time.perf_counter() - began)
        return seq

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(ids))))


def cpu(usage: Usage, rounds: int, threads: dict[str, float] | None = None) -> dict[str, Any]:
    """The CPU each group used over the measured interval: seconds, share of the machine, ms per round."""
    found: dict[str, Any] = {"wall_s": round(usage.wall_s, 2), "cores": usage.cores}
    workers = sum(seconds for name, seconds in usage.cpu_s.items() if name.startswith("worker-"))
    seconds = {name: usage.cpu_s.get(name, 0.0) for name in ("benchmark", "temporal", "postgres", "other", "idle")}
    seconds["workers"] = workers
    capacity = usage.cores * usage.wall_s
    for name in (*GROUPS, "other", "idle"):
        found[name] = {
            "cpu_s": round(seconds[name], 2),
            "share": round(seconds[name] / capacity, 3) if capacity else 0.0,
            "ms_per_round": round(1000 * seconds[name] / rounds, 2),
        }
    found["each_worker_cpu_s"] = [round(s, 2) for n, s in sorted(usage.cpu_s.items()) if n.startswith("worker-")]
    if threads is not None:
        found["worker_threads_cpu_s"] = {name: round(s, 2) for name, s in sorted(threads.items())}
    return found


async def throughput(
    servers: Servers, workers: int, sessions: int, with_start: bool, profile: str | None = None
) -> dict[str, Any]:
    latencies: list[float] = []
    refused: list[str] = []
    async with fleet(workers, servers.address, servers.dsn, 0.0, profile) as running:
        pids = [p.pid for p in running.processes]
        meter = Meter(
            {
                "benchmark": [os.getpid()],
                "temporal": [servers.temporal_pid],
                "postgres": [servers.postgres_pid],
                **{f"worker-{i}": [pid] for i, pid in enumerate(pids)},
            }
        )
        ids = [f"{running.queue}-{i}" for i in range(sessions)]
        if profile is not None:
            for process in running.processes:
                process.send_signal(signal.SIGUSR1)  # the profile starts here
        threads_before = thread_seconds(pids)
        first = meter.sample()
        started = time.perf_counter()
        seqs = await begin(running, ids, with_start, latencies, refused)
        submitted = time.perf_counter() - started
        await finish(running, ids, seqs)
        seconds = time.perf_counter() - started
        last = meter.sample()
        threads = thread_seconds(pids)
    threads = {name: s - threads_before.get(name, 0.0) for name, s in threads.items()}
    done = sessions - len(refused)  # a refused session's turn is not waited for, nor counted
    return {
        "workers": workers,
        "start": "update-with-start" if with_start else "start+submit",
        "sessions": sessions,
        "refused": refused,
        "seconds": round(seconds, 2),
        "submitting_s": round(submitted, 2),
        "submit_median_ms": round(1000 * statistics.median(latencies), 1),
        "sessions_per_s": round(done / seconds, 2),
        "rounds_per_s": round(done * ROUNDS / seconds, 2),
        "cpu": cpu(meter.between(first, last), done * ROUNDS, threads),
    }


async def local(servers: Servers, sessions: int) -> dict[str, Any]:
    """The same sessions in one process on the same PostgreSQL, no Temporal: ``open_session`` each, concurrently."""
    store = PostgresStore(servers.dsn)
    meter = Meter({"benchmark": [os.getpid()], "postgres": [servers.postgres_pid]})
    tools = [agent.toolbox[name] for name in agent.toolbox.names()]
    prefix = f"local-{uuid.uuid4().hex[:8]}"

    async def one(i: int) -> None:
        model = ScriptedModel(answer, keep_calls=False)
        async with open_session(store, f"{prefix}-{i}", model, tools=tools, config=agent.config) as session:
            session.send(str(i))
            await session.turn_done()

    first = meter.sample()
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(sessions)))
    seconds = time.perf_counter() - started
    last = meter.sample()
    store.close()
    return {
        "sessions": sessions,
        "seconds": round(seconds, 2),
        "sessions_per_s": round(sessions / seconds, 2),
        "rounds_per_s": round(sessions * ROUNDS / seconds, 2),
        "cpu": cpu(meter.between(first, last), sessions * ROUNDS),
    }


async def failover(address: str, dsn: str, sessions: int) -> dict[str, Any]:
    async with fleet(3, address, dsn, 0.1) as running:
        store = running.store
        ids = [f"{running.queue}-{i}" for i in range(sessions)]
        seqs = await begin(running, ids)
        first = seqs[0]
        assert first is not None  # nothing is refused here: begin raises
        await store.wait_for_inputs(ids[0], first + 3)  # the first round is under way: kill now
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
    quick: bool, sessions: int, counts: list[int], modes: list[bool], with_failover: bool, profile: str | None
) -> dict[str, Any]:
    found, cli = binaries(), binary()
    if found is None or cli is None:
        raise SystemExit("needs PostgreSQL's binaries and the `temporal` CLI (the dev extra)")
    postgres, temporal = PostgresServer(found, durable=True), TemporalServer(cli)
    sessions = 20 if quick else sessions
    try:
        postgres.start()
        await temporal.ready()
        servers = Servers(temporal.address, postgres.dsn(), temporal.pid, postgres.pid())
        one = await local(servers, sessions)
        print(f"  local: {one['seconds']} s", file=sys.stderr, flush=True)
        rows = []
        for workers in counts:
            for with_start in modes:
                prefix = None if profile is None else f"{profile}/{workers}-{int(with_start)}"
                rows.append(await throughput(servers, workers, sessions, with_start, prefix))
                rows[-1]["ratio"] = round(one["rounds_per_s"] / rows[-1]["rounds_per_s"], 1)
                print(f"  {workers} workers, {rows[-1]['start']}: {rows[-1]['seconds']} s", file=sys.stderr, flush=True)
        fail = await failover(servers.address, postgres.dsn(), 10 if quick else 30) if with_failover else None
    finally:
        temporal.stop()
        postgres.remove()
    return {"local": one, "throughput": rows, "failover": fail, "cores": os.cpu_count()}


def cpu_tables(results: dict[str, Any]) -> str:
    """Where the cores went in each run: CPU seconds and share of the machine per group, and CPU ms per round."""
    runs = [("local", "-", results["local"]), *((r["workers"], r["start"], r) for r in results["throughput"])]
    names = (*GROUPS, "other", "idle")

    def cell(used: dict[str, Any], name: str) -> str:
        return f"{used[name]['cpu_s']} ({100 * used[name]['share']:.0f}%)" if name in used else "-"

    shares = table(
        ("workers", "start", "wall s", *names),
        [(w, start, r["cpu"]["wall_s"], *(cell(r["cpu"], n) for n in names)) for w, start, r in runs],
    )
    per_round = table(
        ("workers", "start", *GROUPS, "all four"),
        [
            (
                w,
                start,
                *(r["cpu"][n]["ms_per_round"] if n in r["cpu"] else "-" for n in GROUPS),
                round(sum(r["cpu"][n]["ms_per_round"] for n in GROUPS if n in r["cpu"]), 2),
            )
            for w, start, r in runs
        ],
    )
    threads = [
        f"  {r['workers']} workers, {r['start']}: "
        + ", ".join(f"{name} {s} s" for name, s in r["cpu"]["worker_threads_cpu_s"].items() if s >= 0.01)
        for r in results["throughput"]
    ]
    return (
        f"CPU seconds over each measured interval (share of {results['cores']} cores x wall s; "
        "other: busy time of processes outside these groups)\n\n"
        f"{shares}\n\nCPU ms per round (a model call and its tool calls)\n\n{per_round}\n\n"
        "Workers' CPU by thread name (live threads; python: the interpreter's threads, tokio: the SDK core's)\n"
        + "\n".join(threads)
    )


def profile_table(folder: str, rounds: int, top: int = 25) -> str:
    """The functions the profiled workers spent the most CPU in (own time), per round, all workers together."""
    import pstats

    dumps = sorted(Path(folder).glob("*.*"))
    if not dumps:
        return "no profile was written (did the workers stop on SIGTERM?)"
    stats = pstats.Stats(*(str(d) for d in dumps))
    rows = []
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(own for _, _, own, _, _ in entries.values())
    for (file, line, function), (_, calls, own, cumulative, _) in sorted(
        entries.items(), key=lambda item: item[1][2], reverse=True
    )[:top]:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        rows.append(
            (f"{function} {where}"[:90], round(calls / rounds, 1), round(1000 * own / rounds, 3),
             round(1000 * cumulative / rounds, 2))
        )  # fmt: skip
    return (
        f"Profile of the workers' Python threads (CPU time, cProfile; {len(dumps)} workers, {rounds} rounds; "
        f"{1000 * total / rounds:.2f} ms of Python CPU per round in all)\n\n"
        + table(("function", "calls/round", "own ms/round", "cumulative ms/round"), rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sessions: a smoke run")
    parser.add_argument("--sessions", type=int, default=200, help="sessions per run (default 200)")
    parser.add_argument("--workers", type=int, nargs="+", default=[4], help="worker counts to run (default 4)")
    parser.add_argument(
        "--start", choices=("both", "with-start", "separate"), default="both", help="how sessions are started"
    )
    parser.add_argument("--failover", action="store_true", help="also kill a worker and time the failover")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run the workers under cProfile and print their hot functions per round (slows them; writes no JSON)",
    )
    options = parser.parse_args()
    modes = {"both": [False, True], "with-start": [True], "separate": [False]}[options.start]
    with tempfile.TemporaryDirectory(prefix="agent-core-profile-") as folder:
        profile = folder if options.profile else None
        results = asyncio.run(
            main_async(options.quick, options.sessions, options.workers, modes, options.failover, profile)
        )
        cores = results["cores"]
        print(f"Sessions as Temporal workflows ({cores} cores: workers, Temporal and PostgreSQL share them)\n")
        one = results["local"]
        headers = (
            "workers",
            "start",
            "sessions",
            "seconds",
            "submitting s",
            "submit median ms",
            "rounds/s",
            "local/this",
        )
        rows = [
            ("local", "-", one["sessions"], one["seconds"], "-", "-", one["rounds_per_s"], 1.0),
            *(
                (r["workers"], r["start"], r["sessions"], r["seconds"], r["submitting_s"], r["submit_median_ms"],
                 r["rounds_per_s"], r["ratio"])
                for r in results["throughput"]
            ),
        ]  # fmt: skip
        print(table(headers, rows))
        for r in results["throughput"]:
            if r["refused"]:
                print(f"\n{r['workers']} workers: {len(r['refused'])} sessions refused their message (not counted):")
                print("\n".join(f"  {reason}" for reason in r["refused"]))
        print(f"\n{cpu_tables(results)}")
        if profile is not None:
            rounds = sum(r["sessions"] for r in results["throughput"]) * ROUNDS
            print(f"\n{profile_table(folder, rounds)}")
    fail = results["failover"]
    if fail is not None:
        print(
            f"\nfailover (3 workers, one killed with SIGKILL, {fail['under_way_at_kill']} of {fail['sessions']} "
            f"sessions under way): longest wait for the next record {fail['failover_s']} s, median "
            f"{fail['median_resume_s']} s, all done {fail['all_done_after_kill_s']} s after the kill"
        )
    if profile is None:
        print(f"\nwrote {write_results('workers', results)}")


if __name__ == "__main__":
    main()
