"""A process writing to a PostgreSQL store, for ``test_postgres.py``; prints what it did as one JSON line.

``python _pg_writer.py DSN race SESSION``: prints ``ready``, waits for a line on
stdin, then appends the scripted session's inputs one by one to SESSION,
reopening its journal whenever another writer came first.
``python _pg_writer.py DSN many K OF COUNT``: writes sessions ``m<i>`` for every
``i < COUNT`` with ``i % OF == K``, one turn per session in turn (interleaved).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import session  # type: ignore[import-not-found]

from effects import ConcurrencyError, PostgresStore, SessionJournal

TURNS = 2


def race(store: PostgresStore, session_id: str) -> dict[str, int]:
    inputs = session(TURNS, session_id=session_id)
    print("ready", flush=True)
    sys.stdin.readline()
    journal = SessionJournal.open(store, session_id)
    won = lost = 0
    while journal.seq < len(inputs):
        try:
            journal.append([inputs[journal.seq]])
            won += 1
        except ConcurrencyError:
            lost += 1
            journal = SessionJournal.open(store, session_id)
    return {"won": won, "lost": lost}


def many(store: PostgresStore, mine: list[str]) -> dict[str, int]:
    scripts = {name: session(TURNS, session_id=name) for name in mine}
    journals = {name: SessionJournal(store, name) for name in mine}
    for name in mine:
        journals[name].append(scripts[name][:1])
    per_turn = (len(scripts[mine[0]]) - 1) // TURNS
    for number in range(TURNS):
        for name in mine:
            journals[name].append(scripts[name][1 + number * per_turn : 1 + (number + 1) * per_turn])
    return {"sessions": len(mine)}


def main(dsn: str, mode: str, *args: str) -> None:
    store = PostgresStore(dsn)
    if mode == "race":
        outcome = race(store, args[0])
    else:
        k, of, count = map(int, args)
        outcome = many(store, [f"m{i}" for i in range(count) if i % of == k])
    store.close()
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
