"""Readers of a PostgreSQL store never see a group the writer has not committed: its records are written and its
session's length raised inside the transaction, and every reader (another store, load_state, replay, export,
the CLI) sees the log as it was until the commit, then all of the group."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from effects import PostgresStore, SessionJournal, export_session, load_state, replay_session
from effects.cli import main

from .conftest import session


def _psycopg() -> Any:
    return pytest.importorskip("psycopg")


def _seen(dsn: str) -> tuple[int, int, int, int]:
    """What readers on their own connections see of ``s1``: length, records, loaded step, replayed records."""
    reader = PostgresStore(dsn, readonly=True)
    try:
        seen = (
            reader.session("s1").length,
            len(list(reader.read("s1"))),
            load_state(reader, "s1").step,
            replay_session(reader, "s1").records,
        )
        assert export_session(reader, "s1").count(b"\n") == seen[0]
        return seen
    finally:
        reader.close()


def test_readers_see_a_group_only_once_it_is_committed(postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = PostgresStore(postgres_dsn)
    journal = SessionJournal(store, "s1", snapshot_every=6)
    inputs = session(1)
    journal.append(inputs[:1])
    with _psycopg().connect(postgres_dsn) as blocker:
        # A row the group's snapshot (after record 6) will conflict with: the writer waits for this transaction
        # after it wrote the group's records and raised the session's length, before its commit.
        blocker.execute("INSERT INTO agent_core_snapshots VALUES ('s1', 6, 0, '', 0, '')")
        pending = journal.submit(inputs[1:6])
        assert pending is not None
        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%snapshots%'"
        with _psycopg().connect(postgres_dsn, autocommit=True) as watch:
            while watch.execute(waiting).fetchone() != (1,):  # until the writer's group waits for our row
                time.sleep(0.005)
        assert _seen(postgres_dsn) == (1, 1, 1, 1)
        assert main(["inspect", postgres_dsn, "s1", "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert (shown["at"], len(shown["timeline"])) == (1, 1)
        assert main(["replay", postgres_dsn, "s1", "--verify"]) == 0
        assert "session s1: 1 records replayed" in capsys.readouterr().out
        assert not pending.done()
        blocker.rollback()
    pending.result(timeout=30)
    assert _seen(postgres_dsn) == (6, 6, 6, 6)
    store.close()
