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
The phases live in ``_store_live`` and ``_store_long`` (and ``_backends``, ``_durable``), the tables in ``_store_report``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _backends import backends, postgres_durable
from _common import write_results
from _durable import concurrent_durable
from _store_live import file_bytes, grouped, live, live_session
from _store_long import big, growth
from _store_report import report

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


if __name__ == "__main__":
    main()
