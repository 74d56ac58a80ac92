"""What seeing inside a session costs: spans, stats and the timeline, against a plain fold of the log.

Each row folds a stored session of realistic turns (``_session.session``) from
a SQLite file; times are per input. Run: ``python benchmarks/observe.py``. The
viewer, which folds only what a page shows, is measured by ``benchmarks/viewer.py``.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import measure, table, write_results
from _session import INPUTS_PER_TURN, session

from effects import (
    SessionJournal,
    SqliteStore,
    replay_session,
    session_spans,
    session_stats,
    timeline,
)

SESSION = "bench"


def stored(path: Path, turns: int) -> SqliteStore:
    store = SqliteStore(path, synchronous="OFF")
    journal = SessionJournal(store, SESSION)
    journal.append(list(session(turns)))
    return store


def readers(store: SqliteStore) -> dict[str, Callable[[], object]]:
    """What is measured, each over the whole stored session."""
    return {
        "fold (replay, no verify)": lambda: replay_session(store, SESSION, verify=False),
        "inspect timeline": lambda: timeline(store, SESSION),
        "session_spans": lambda: session_spans(store, SESSION),
        "session_stats": lambda: session_stats(store, SESSION),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as directory:
        for turns in args.turns:
            store = stored(Path(directory) / f"{turns}.db", turns)
            inputs = store.session(SESSION).length
            runs = readers(store)
            for name, run in runs.items():
                timing = measure(run, inputs, repeat=args.repeat)
                rows.append({"turns": turns, "inputs": inputs, "what": name, "us_per_input": timing.median_ns / 1000})
            store.close()
    print(f"per input, median of {args.repeat} runs; {INPUTS_PER_TURN} inputs per turn")
    print(
        table(
            ("turns", "inputs", "what", "us/input"),
            [(r["turns"], r["inputs"], r["what"], f"{r['us_per_input']:.1f}") for r in rows],
        )
    )
    print(f"results: {write_results('observe', {'rows': rows})}")


if __name__ == "__main__":
    main()
