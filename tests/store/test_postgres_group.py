"""Group commit on PostgreSQL: a conflict fails only its own batch, a failed group fails every batch in it.

Sessions sharing transactions and a process killed with a group in flight: ``test_group_commit.py``, on both stores.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from postgres_server import PostgresServer  # type: ignore[import-not-found]

from agent_core import replay
from effects import (
    ConcurrencyError,
    PostgresStore,
    SessionJournal,
    StoreUnavailable,
    load_state,
    replay_session,
)

from .conftest import START, session, turn


def test_without_grouping_each_batch_is_one_transaction(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn, group_commit=False)
    with held(postgres_dsn, store, "blocker"):
        pending = [SessionJournal(store, f"s{n}").submit(session(0, session_id=f"s{n}")) for n in range(5)]
    wait_all(pending)
    assert store.commits == 1 + 1 + 5  # the blocker's session, its held batch, then one per session


def psycopg() -> Any:
    return pytest.importorskip("psycopg")


@contextlib.contextmanager
def held(dsn: str, store: PostgresStore, blocker: str) -> Iterator[Future[None]]:
    """Keep the store's writer inside one group (its row lock on ``blocker`` waits for ours) while the block runs.

    Whatever the block submits queues behind that group and goes out as the next one, once the block ends.
    """
    SessionJournal(store, blocker).append(session(0, session_id=blocker))
    journal = SessionJournal.open(store, blocker)
    with psycopg().connect(dsn) as db:
        db.execute("SELECT 1 FROM agent_core_sessions WHERE name = %s FOR UPDATE", (blocker,))
        first = journal.submit(session(1, session_id=blocker)[journal.seq : journal.seq + 1])
        assert first is not None
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE 'SELECT name, length, head FROM agent_core_sessions %'"
        )
        with psycopg().connect(dsn, autocommit=True) as watch:
            while watch.execute(waiting).fetchone() != (1,):  # until the writer's group waits for our lock
                time.sleep(0.005)
        yield first
        with contextlib.suppress(psycopg().OperationalError):  # a test that stopped the server meanwhile
            db.commit()


def wait_all(pending: list[Future[None] | None]) -> list[BaseException | None]:
    """Each future's error, or ``None``."""
    return [None if done is None else done.exception(timeout=30) for done in pending]


def test_a_conflicting_batch_fails_alone_and_its_group_commits(postgres_dsn: str) -> None:
    store, other = PostgresStore(postgres_dsn), PostgresStore(postgres_dsn)
    inputs = session(1, session_id="c")
    SessionJournal(store, "c").append(inputs[:1])
    late = SessionJournal.open(store, "c")
    SessionJournal.open(other, "c").append(inputs[1:2])  # another process appended first
    before = store.commits
    with held(postgres_dsn, store, "blocker"):
        journals = [SessionJournal(store, f"s{n}") for n in range(5)]
        pending = [j.submit(session(0, session_id=j.session_id)) for j in journals[:3]]
        pending.append(late.submit(inputs[1:3]))
        pending += [j.submit(session(0, session_id=j.session_id)) for j in journals[3:]]
    errors = wait_all(pending)
    assert store.commits - before == 3  # the blocker's session, its held batch, then all six batches at once
    assert [type(e) for e in errors] == [type(None)] * 3 + [ConcurrencyError] + [type(None)] * 2
    assert str(errors[3]) == ConcurrencyError("c", 1, 2).args[0]
    for n in range(5):
        assert replay_session(store, f"s{n}", verify=True).state == replay(session(0, session_id=f"s{n}"))
    assert [r.decode() for r in store.read("c")] == inputs[:2]


def test_batches_of_one_session_in_one_group_follow_each_other(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    inputs = session(1, session_id="e")
    SessionJournal(store, "e").append(inputs[:1])
    journal = SessionJournal.open(store, "e")
    with held(postgres_dsn, store, "blocker"):
        pending = [journal.submit(inputs[n : n + 1]) for n in range(1, 4)]  # one group, behind the held one
    assert wait_all(pending) == [None, None, None]
    assert load_state(store, "e").step == 4
    store.close()


def test_a_batch_behind_a_refused_one_in_the_same_group_is_refused_too(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    inputs = session(1, session_id="d")
    SessionJournal(store, "d").append(inputs[:1])
    stale = SessionJournal.open(store, "d")
    SessionJournal.open(store, "d").append(turn(7, START + 99)[:1])  # another writer's input at record 2
    with held(postgres_dsn, store, "blocker"):
        pending = [stale.submit(inputs[1:2]), stale.submit(inputs[2:3])]  # one group, behind the held one
    refused, diverged = wait_all(pending)
    assert isinstance(refused, ConcurrencyError) and not refused.diverged
    assert isinstance(diverged, ConcurrencyError) and diverged.diverged  # at the length it expected, after another
    assert load_state(store, "d").step == 2  # the chain holds: nothing was written onto the other's record
    store.close()


def test_a_row_no_check_foresaw_fails_only_its_batch(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    inputs = session(1, session_id="c")
    journal = SessionJournal(store, "c")
    journal.append(inputs[:1])
    with psycopg().connect(postgres_dsn, autocommit=True) as db:  # a record past the session's end
        db.execute("INSERT INTO agent_core_inputs SELECT session_id, 2, version, codec, data, hash, NULL, NULL "
                   "FROM agent_core_inputs WHERE session_id = 'c'")  # fmt: skip
    with held(postgres_dsn, store, "blocker"):
        pending = [SessionJournal(store, f"s{n}").submit(session(0, session_id=f"s{n}")) for n in range(2)]
        pending.insert(1, journal.submit(inputs[1:2]))
    errors = wait_all(pending)
    assert errors[0] is None and errors[2] is None
    assert isinstance(errors[1], ConcurrencyError)
    assert (errors[1].expected, errors[1].actual) == (1, 2)  # the records stored, the one inserted past the end too
    assert store.session("c").length == 1
    assert [info.length for info in store.sessions() if info.session_id.startswith("s")] == [1, 1]


@pytest.mark.slow
def test_a_group_that_cannot_commit_fails_every_batch_in_it(postgres_server: PostgresServer, postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn, reconnect_for=0.5)  # the server stays down longer than the store waits
    journals = [SessionJournal(store, f"s{n}") for n in range(5)]
    for journal in journals:
        journal.append(session(0, session_id=journal.session_id))
    with held(postgres_dsn, store, "blocker") as first:
        pending = [first, *(j.submit(session(1, session_id=j.session_id)[1:3]) for j in journals)]
        try:
            # The held group and the queued one are in flight. "immediate": with "fast" the blocker's backend
            # ends first and its lock's release could let the held group commit before the writer's ends.
            postgres_server.stop("immediate")
        finally:
            errors = wait_all(pending)
            postgres_server.start()
    assert all(isinstance(error, StoreUnavailable) for error in errors), errors
    assert "cannot reach the PostgreSQL store" in str(errors[1])
    assert [info.length for info in store.sessions() if info.session_id.startswith("s")] == [1] * 5
    for journal in journals:  # nothing of them was written: their journals refuse to go on
        with pytest.raises(RuntimeError, match="failed to commit"):
            journal.submit(session(1, session_id=journal.session_id)[3:4])
    reopened = SessionJournal.open(store, "s0")
    reopened.append(session(1, session_id="s0")[1:3])  # the store connects again
    assert store.session("s0").length == 3
