"""Group commit on PostgreSQL: sessions share transactions, a conflict fails only its own batch, a failed group
fails every batch in it, and a process killed with a group in flight loses nothing it acknowledged."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import anyio
import pytest
from postgres_server import PostgresServer  # type: ignore[import-not-found]

from agent_core import replay
from effects import (
    ConcurrencyError,
    PostgresStore,
    SessionJournal,
    StoreUnavailable,
    open_session,
    replay_session,
)
from effects.testing import ScriptedModel

from .conftest import session
from .test_group_commit import look, run_child, script


@pytest.mark.anyio
async def test_concurrent_sessions_share_transactions(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)

    async def converse(session_id: str) -> None:
        async with open_session(store, session_id, ScriptedModel(script), tools=[look]) as s:
            for n in range(3):
                s.send(f"question {n}")
                await s.settled()

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(converse, f"s{n}")
    batches = sum(info.length for info in store.sessions())
    assert store.commits < batches / 2  # 20 sessions x 3 turns, each turn several batches
    for n in range(20):
        report = replay_session(store, f"s{n}", verify=True)
        assert report.state.turns == 3 and report.state.turn is None
    store.close()


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
        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        with psycopg().connect(dsn, autocommit=True) as watch:
            while watch.execute(waiting).fetchone() != (1,):  # until the writer waits for our lock
                time.sleep(0.005)
        yield first
        with contextlib.suppress(psycopg().OperationalError):  # a test that stopped the server meanwhile
            db.commit()
    first.result()


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
    assert store.session("c").length == 1
    assert [info.length for info in store.sessions() if info.session_id.startswith("s")] == [1, 1]


@pytest.mark.slow
def test_a_group_that_cannot_commit_fails_every_batch_in_it(postgres_server: PostgresServer, postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    journals = [SessionJournal(store, f"s{n}") for n in range(5)]
    for journal in journals:
        journal.append(session(0, session_id=journal.session_id))
    with pytest.raises(StoreUnavailable), held(postgres_dsn, store, "blocker"):
        pending = [j.submit(session(1, session_id=j.session_id)[1:3]) for j in journals]
        try:
            postgres_server.stop()  # the held group and the queued one are in flight
        finally:
            errors = wait_all(pending)
            postgres_server.start()
    assert all(isinstance(error, StoreUnavailable) for error in errors), errors
    assert "cannot reach the PostgreSQL store" in str(errors[0])
    assert [info.length for info in store.sessions() if info.session_id.startswith("s")] == [1] * 5
    for journal in journals:  # nothing of them was written: their journals refuse to go on
        with pytest.raises(RuntimeError, match="failed to commit"):
            journal.submit(session(1, session_id=journal.session_id)[3:4])
    reopened = SessionJournal.open(store, "s0")
    reopened.append(session(1, session_id="s0")[1:3])  # the store connects again
    assert store.session("s0").length == 3


@pytest.mark.slow
def test_a_kill_during_a_group_commit_loses_nothing_acknowledged(postgres_dsn: str) -> None:
    acknowledged = run_child(postgres_dsn, "group")
    assert len(acknowledged) > 1
    store = PostgresStore(postgres_dsn, readonly=True)
    lengths = {info.session_id: info.length for info in store.sessions()}
    for session_id, step in acknowledged.items():
        assert lengths[session_id] >= step, (
            f"{session_id}: acknowledged step {step}, the log holds {lengths[session_id]}"
        )
        replay_session(store, session_id, verify=True)
