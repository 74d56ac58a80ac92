"""The event log's costs: appending with grouped commits, resuming, and bytes on disk as a session grows.

* the runner's 1,000-round workload (``runner.py``: an instant model and
  instant tools, four rounds of three parallel calls and an answer per turn),
  run live with a SQLite journal: commits, inputs per second, commit latency,
  bytes on disk and resume time (targets: <= 1 MB and <= 5 ms);
* append throughput of the same inputs grouped as the machine grouped them,
  against one commit per input, with ``synchronous=FULL`` and ``NORMAL``;
* a 100,000-input session with realistic content (``_session.session``):
  append rate, resume with and without snapshots, full verification, and the
  cost of a turn digest against a full state hash (why turn ends record a digest);
* log bytes per turn as a session grows (must stay flat: only new content is
  written), next to the size of the state;
* the same workload on SQLite and on PostgreSQL (a server started from Debian's
  binaries for the run): inputs/s, commit latency, resume time, bytes per round;
* 1,000 concurrent durable sessions on one store, group commit against one
  commit per batch in the same run: on SQLite (with the ``turn`` mode too) and
  on PostgreSQL (fsync on).

Run ``python benchmarks/store.py`` (``--quick`` for a smoke run; ``--only
durable,durable-postgres`` for some phases). Each phase runs in a fresh interpreter. Prints tables, writes ``benchmarks/results/store.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _backends import backends, postgres_durable, report_backends
from _common import table, write_results
from _durable import concurrent_durable, report_durable
from _session import INPUTS_PER_TURN
from _session import session as realistic_session
from runner import ROUNDS_PER_TURN, instant_model, lookup

from agent_core import AgentConfig, AgentInput, AgentState, encode_input, encode_state, state_hash
from effects import Agent, EventStore, SessionJournal, SqliteStore, load_state, replay_session, turn_digest

TARGET_BYTES = 1_000_000
TARGET_RESUME_MS = 5.0


def file_bytes(path: Path) -> int:
    """The store's size on disk once its write-ahead log is folded into the file."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def best_and_median(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Milliseconds: the fastest and the median of ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return min(samples), statistics.median(samples)


class TimedJournal:
    """A journal that times each grouped commit and keeps the batches."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        self.batches: list[list[AgentInput]] = []
        self.latencies_ms: list[float] = []

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState], /) -> None:
        start = time.perf_counter_ns()
        self.journal.append(inputs, states)
        self.latencies_ms.append((time.perf_counter_ns() - start) / 1e6)
        self.batches.append(list(inputs))


# --- phase: the runner's workload, live -------------------------------------------------------


async def live_session(opener: Callable[[], EventStore], rounds: int) -> TimedJournal:
    """The runner's workload with a journal on ``opener()``; returns the timed journal (closed: final snapshot saved)."""
    timed = TimedJournal(SessionJournal(opener(), "bench"))
    config = AgentConfig(max_identical_tool_calls=1_000_000)
    agent = Agent(instant_model(), tools=[lookup], config=config, journal=timed, session_id="bench")
    async with agent.running() as session:
        for turn in range(rounds // ROUNDS_PER_TURN):
            session.send(f"question {turn}")
            await session.settled()
    timed.journal.close()
    return timed


def live(rounds: int, directory: Path) -> dict[str, Any]:
    """Run the workload under both durability settings; measure disk and resume on the FULL one."""
    out: dict[str, Any] = {"rounds": rounds}
    for synchronous in ("FULL", "NORMAL"):
        path = directory / f"live-{synchronous}.db"
        start = time.perf_counter()
        timed = anyio.run(live_session, partial(SqliteStore, path, synchronous=synchronous), rounds)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        inputs = sum(len(batch) for batch in timed.batches)
        latencies = sorted(timed.latencies_ms)
        out[synchronous] = {
            "inputs": inputs,
            "commits": len(timed.batches),
            "inputs_per_commit": inputs / len(timed.batches),
            "seconds": seconds,
            "commit_ms_median": statistics.median(latencies),
            "commit_ms_p99": latencies[int(len(latencies) * 0.99)],
            "bytes": file_bytes(path),
        }
        Path(directory / f"batches-{synchronous}.json").write_text(json.dumps([len(b) for b in timed.batches]))
    path = directory / "live-FULL.db"
    store = SqliteStore(path, readonly=True)
    load_best, load_median = best_and_median(lambda: load_state(store, "bench"), 50)
    open_best, open_median = best_and_median(lambda: load_state(SqliteStore(path, readonly=True), "bench"), 50)
    out["resume"] = {"load_ms": load_best, "load_ms_median": load_median, "open_and_load_ms": open_best,
                     "open_and_load_ms_median": open_median}  # fmt: skip
    return out


# --- phase: append throughput, grouped against one commit per input ------------------------------


def grouped(rounds: int, directory: Path) -> dict[str, Any]:
    """Append the workload's inputs again: as the machine grouped them, and one per commit."""
    timed = anyio.run(live_session, lambda: SqliteStore(directory / "source.db", synchronous="OFF"), rounds)
    batches = timed.batches
    inputs = sum(len(batch) for batch in batches)
    out: dict[str, Any] = {"inputs": inputs, "inputs_per_commit": inputs / len(batches)}
    for synchronous in ("FULL", "NORMAL"):
        for grouping, plan in (("grouped", batches), ("one per commit", [[i] for b in batches for i in b])):
            path = directory / f"append-{synchronous}-{len(plan)}.db"
            journal = SessionJournal(SqliteStore(path, synchronous=synchronous), "bench")
            latencies = []
            start = time.perf_counter_ns()
            for batch in plan:
                begun = time.perf_counter_ns()
                journal.append(batch)
                latencies.append((time.perf_counter_ns() - begun) / 1e3)
            seconds = (time.perf_counter_ns() - start) / 1e9
            out[f"{synchronous} {grouping}"] = {
                "inputs_per_second": inputs / seconds,
                "commit_us_median": statistics.median(latencies),
                "us_per_input": seconds * 1e6 / inputs,
            }
    return out


# --- phase: a 100,000-input session ---------------------------------------------------------------


def big(inputs_wanted: int, directory: Path) -> dict[str, Any]:
    """Write a long realistic session turn by turn, then resume and verify it in several ways."""
    turns = max(1, (inputs_wanted - 1) // INPUTS_PER_TURN)
    inputs = list(realistic_session(turns))
    path = directory / "big.db"
    journal = SessionJournal(SqliteStore(path, synchronous="NORMAL", keep_snapshots=2), "big")
    start = time.perf_counter()
    journal.append(inputs[:1])
    for first in range(1, len(inputs), INPUTS_PER_TURN):
        journal.append(inputs[first : first + INPUTS_PER_TURN])
    append_seconds = time.perf_counter() - start
    journal.close()
    state = journal.state
    out: dict[str, Any] = {
        "inputs": len(inputs),
        "append_inputs_per_second": len(inputs) / append_seconds,
        "bytes": file_bytes(path),
        "state_bytes": len(encode_state(state, format="msgpack")),
    }
    bare = directory / "big-no-snapshots.db"
    shutil.copy(path, bare)
    with sqlite3.connect(bare) as db:
        db.execute("DELETE FROM snapshots")
    store = SqliteStore(path, readonly=True)
    snapshots = [s.seq for s in (store.load_snapshot("big"), store.load_snapshot("big", len(inputs) - 1)) if s]
    out["snapshots_at"] = snapshots
    out["resume_ms"] = best_and_median(lambda: load_state(store, "big"), 3)[0]
    out["resume_tail_ms"] = best_and_median(lambda: load_state(store, "big", len(inputs) - 1), 3)[0]
    out["resume_tail_inputs"] = len(inputs) - 1 - snapshots[-1]
    out["fold_all_ms"] = best_and_median(lambda: load_state(SqliteStore(bare, readonly=True), "big"), 1)[0]
    out["verify_ms"] = best_and_median(lambda: replay_session(store, "big"), 1)[0]
    out["turn_digest_us"] = best_and_median(lambda: turn_digest(state), 20)[0] * 1000
    out["state_hash_ms"] = best_and_median(lambda: state_hash(state), 5)[0]
    return out


# --- phase: bytes per turn as the session grows -----------------------------------------------------


def growth(turns: int, directory: Path) -> list[dict[str, Any]]:
    """Bytes the log stores for one turn at several session lengths, next to the state's size."""
    path = directory / "growth.db"
    inputs = list(realistic_session(turns))
    journal = SessionJournal(SqliteStore(path, synchronous="OFF"), "g")
    journal.append(inputs[:1])
    marks = sorted({1, 10, 100, 1000, turns} & set(range(1, turns + 1)))
    rows = []
    with sqlite3.connect(path) as db:
        for number in range(turns):
            first = 1 + number * INPUTS_PER_TURN
            journal.append(inputs[first : first + INPUTS_PER_TURN])
            if number + 1 in marks:
                (stored,) = db.execute(
                    "SELECT sum(length(data) + length(hash) + coalesce(length(turn_digest), 0)"
                    " + coalesce(length(state_hash), 0)) FROM inputs WHERE seq BETWEEN ? AND ?",
                    (first + 1, first + INPUTS_PER_TURN),
                ).fetchone()
                raw = sum(len(encode_input(inp, format="msgpack")) for inp in inputs[first : first + INPUTS_PER_TURN])
                state = len(encode_state(journal.state, format="msgpack"))
                rows.append({"turn": number + 1, "log_bytes": stored, "input_bytes": raw, "state_bytes": state})
    return rows


# --- driver ---------------------------------------------------------------------------------------------

PHASES: dict[str, Callable[[int, Path], Any]] = {
    "live": live,
    "grouped": grouped,
    "big": big,
    "growth": growth,
    "backends": lambda rounds, directory: backends(rounds, directory, live_session, file_bytes),
    "durable": lambda sessions, directory: concurrent_durable(sessions, 2, directory),
    "durable-postgres": lambda sessions, directory: postgres_durable(sessions, 2, directory),
}


def in_subprocess(phase: str, size: int) -> Any:
    """Run one phase in a fresh interpreter, so its timings and memory are its own."""
    done = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--size", str(size)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def main() -> None:
    """Run every phase, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sessions (a smoke run)")
    parser.add_argument("--only", metavar="PHASES", help=f"comma-separated phases to run (of {', '.join(PHASES)})")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        with tempfile.TemporaryDirectory() as directory:
            print(json.dumps(PHASES[args.phase](args.size, Path(directory))))
        return
    rounds, big_inputs, turns = (200, 20_000, 200) if args.quick else (1000, 100_000, 2000)
    sessions = 200 if args.quick else 1000
    sizes = {"live": rounds, "grouped": rounds, "big": big_inputs, "growth": turns, "backends": rounds}
    chosen = args.only.split(",") if args.only else list(PHASES)
    unknown = sorted(set(chosen) - set(PHASES))
    if unknown:
        parser.error(f"--only: unknown phase {', '.join(unknown)}; expected some of {', '.join(PHASES)}")
    results = {phase: in_subprocess(phase, sizes.get(phase, sessions)) for phase in chosen}
    report(results)
    path = write_results("store", {"mode": "quick" if args.quick else "full", **results})
    print(f"\nwrote {path}")


def report(results: dict[str, Any]) -> None:
    """Print the tables of the phases that ran."""
    reports: dict[str, Callable[[Any], None]] = {
        "live": report_live,
        "grouped": report_append,
        "big": report_big,
        "growth": report_growth,
        "backends": partial(report_backends, table=table),
        "durable": partial(report_durable, table=table),
        "durable-postgres": partial(report_durable, table=table, where="one PostgreSQL database (fsync on)"),
    }
    for phase, result in results.items():
        reports[phase](result)


def report_live(live_run: dict[str, Any]) -> None:
    """The runner's workload table and the resume line."""
    print(f"The runner's workload, {live_run['rounds']:,} rounds, live with a SQLite journal\n")
    rows: list[tuple[str, ...]] = [
        (
            mode,
            f"{r['inputs']:,}",
            f"{r['commits']:,}",
            f"{r['inputs_per_commit']:.2f}",
            f"{r['inputs'] / r['seconds']:,.0f}",
            f"{r['commit_ms_median']:.3f}",
            f"{r['commit_ms_p99']:.3f}",
            f"{r['bytes'] / 1e6:.3f}",
        )
        for mode, r in ((m, live_run[m]) for m in ("FULL", "NORMAL"))
    ]
    headers = ("synchronous", "inputs", "commits", "inputs/commit", "inputs/s", "commit ms", "p99 ms", "MB on disk")
    print(table(headers, rows))
    resume = live_run["resume"]
    print(
        f"resume (snapshot + tail): {resume['load_ms']:.2f} ms best, {resume['load_ms_median']:.2f} ms median; "
        f"opening the file too: {resume['open_and_load_ms']:.2f} ms best, "
        f"{resume['open_and_load_ms_median']:.2f} ms median "
        f"(targets: <= {TARGET_RESUME_MS} ms, <= {TARGET_BYTES / 1e6:.0f} MB)"
    )


def report_append(appended: dict[str, Any]) -> None:
    """Grouped commits against one commit per input."""
    count, per_commit = appended["inputs"], appended["inputs_per_commit"]
    print(f"\nAppend throughput, the same {count:,} inputs ({per_commit:.2f} per commit when grouped)\n")
    rows = [
        (name, f"{r['inputs_per_second']:,.0f}", f"{r['us_per_input']:.1f}", f"{r['commit_us_median']:.1f}")
        for name, r in appended.items()
        if isinstance(r, dict)
    ]
    print(table(("synchronous, grouping", "inputs/s", "us/input", "commit us (median)"), rows))


def report_growth(growth_rows: list[dict[str, Any]]) -> None:
    """Bytes per turn as the session grows."""
    print("\nLog bytes per turn as the session grows (realistic content, 40 inputs per turn)\n")
    rows = [
        (f"{r['turn']:,}", f"{r['log_bytes']:,}", f"{r['input_bytes']:,}", f"{r['state_bytes']:,}") for r in growth_rows
    ]
    print(table(("turn", "log bytes (stored)", "input bytes (MessagePack)", "state bytes"), rows))


def report_big(r: dict[str, Any]) -> None:
    """The 100,000-input table."""
    print(f"\nA session of {r['inputs']:,} inputs (realistic content), written turn by turn\n")
    rows = [
        ("append (turn per commit, NORMAL)", f"{r['append_inputs_per_second']:,.0f} inputs/s"),
        ("on disk", f"{r['bytes'] / 1e6:.2f} MB (state: {r['state_bytes'] / 1e6:.2f} MB)"),
        ("resume, snapshot at the end", f"{r['resume_ms']:.1f} ms"),
        (f"resume, snapshot + {r['resume_tail_inputs']:,} inputs", f"{r['resume_tail_ms']:.1f} ms"),
        ("resume without snapshots (fold all)", f"{r['fold_all_ms']:.1f} ms"),
        ("replay --verify (chain, digests, hashes)", f"{r['verify_ms']:.1f} ms"),
        ("turn digest / full state hash", f"{r['turn_digest_us']:.0f} us / {r['state_hash_ms']:.1f} ms"),
    ]
    print(table(("measure", "value"), rows))


if __name__ == "__main__":
    main()
