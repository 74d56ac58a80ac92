"""The store benchmark's long-session phases: a 100,000-input realistic session written, resumed and verified,
and the log's bytes per turn as a session grows."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from _session import INPUTS_PER_TURN
from _session import session as realistic_session
from _store_live import best_and_median, file_bytes

from agent_core import encode_input, encode_state, state_hash
from effects import SessionJournal, SqliteStore, load_state, replay_session, turn_digest


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
