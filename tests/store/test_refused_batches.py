"""What a journal does after the store refused one of its batches: it saves no snapshot of a state the log does
not hold, loses nothing it was given without saying so, and a store never takes a snapshot beyond its log."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from agent_core import STATE_FORMAT, UserMessageReceived, encode_state, replay, state_digest
from effects import (
    ConcurrencyError,
    EventStore,
    Session,
    SessionJournal,
    Snapshot,
    SqliteStore,
    load_state,
    open_session,
)
from effects.testing import ManualClock, ScriptedModel, say

from .conftest import START, session, turn


def _raced(store: EventStore) -> SessionJournal:
    """A journal opened at record 1 of ``s1`` while another writer appended record 2: its next batch is refused."""
    SessionJournal(store, "s1").append(session(0))
    stale = SessionJournal.open(store, "s1")
    SessionJournal.open(store, "s1").append(turn(7, START + 99)[:1])
    return stale


def test_a_journal_whose_batch_was_refused_saves_no_snapshot_of_the_refused_state(store: EventStore) -> None:
    stale = _raced(store)
    with pytest.raises(ConcurrencyError):
        stale.append(session(1)[1:2])
    with pytest.raises(RuntimeError, match="an earlier batch of this journal failed to commit") as refused:
        stale.snapshot()
    assert isinstance(refused.value.__cause__, ConcurrencyError)
    assert store.load_snapshot("s1") is None
    # The log holds the other writer's record 2, and so does the state loaded from it.
    assert [m.content for m in load_state(store, "s1").messages] == ["question 7"]


def test_close_saves_no_snapshot_behind_a_batch_refused_while_in_flight(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    stale = _raced(store)
    other = sqlite3.connect(tmp_path / "log.db")
    other.execute("BEGIN IMMEDIATE")  # the store's writer waits for this lock: the batch stays in flight
    pending = stale.submit(session(1)[1:2])
    assert pending is not None and not pending.done()
    closing = threading.Thread(target=stale.close)
    closing.start()  # what open_session does on exit
    other.rollback()
    closing.join()
    assert isinstance(pending.exception(), ConcurrencyError)
    assert store.load_snapshot("s1") is None
    assert [m.content for m in load_state(store, "s1").messages] == ["question 7"]
    other.close()
    store.close()


def test_close_names_the_inputs_kept_back_behind_a_failed_commit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    SessionJournal(store, "s1").append(session(0))
    stale = SessionJournal.open(store, "s1", durability="turn")
    SessionJournal.open(store, "s1").append(turn(7, START + 99)[:1])
    ended = stale.submit(turn(1, START + 1))  # a whole turn: committed (and refused) at its end
    assert stale.submit(turn(2, START + 2)[:2]) is None  # a running turn: kept back
    assert ended is not None and isinstance(ended.exception(), ConcurrencyError)
    at = 2 + len(turn(1, START + 1))
    with pytest.raises(RuntimeError) as lost:
        stale.close()
    assert str(lost.value) == (
        f"session 's1': inputs {at} to {at + 1}, kept back until the turn ends, were never committed: "
        f"an earlier batch of this journal failed to commit ({ended.exception()}); "
        "load the session to see what the store holds"
    )
    assert store.session("s1").length == 2
    store.close()


def test_a_store_refuses_a_snapshot_after_a_record_it_does_not_hold(store: EventStore) -> None:
    inputs = session(0)
    SessionJournal(store, "s1").append(inputs)
    data = encode_state(replay(inputs), format="msgpack")
    beyond = Snapshot(seq=2, schema_version=STATE_FORMAT, state_hash=state_digest(data), data=data)
    with pytest.raises(ValueError) as refused:
        store.save_snapshot("s1", beyond)
    assert str(refused.value) == (
        "snapshot of session 's1' after record 2, but the log has records 1 to 1: a snapshot is saved after "
        "records the store holds; reload the session and take it again"
    )
    assert store.load_snapshot("s1") is None


@pytest.mark.anyio
async def test_a_session_whose_commit_was_refused_shows_the_state_its_log_holds(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    session: Session | None = None
    with pytest.raises(ConcurrencyError):
        async with open_session(store, "s1", ScriptedModel([say("hi")]), clock=ManualClock(START)) as session:
            await session.settled()
            other = UserMessageReceived(timestamp=START, message_id="x", content="another writer's")
            SessionJournal.open(store, "s1").append([other])
            session.send("mine")  # its commit expects 1 record; the log has 2
            await session.settled()
    assert session is not None
    assert session.state == load_state(store, "s1", 1)  # not the state after "mine", which no log holds
    store.close()
