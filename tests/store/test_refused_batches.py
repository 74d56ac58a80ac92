"""What happens after the store refused a batch: the journal saves no snapshot of a state the log does not hold
and loses nothing it was given without saying so, a store never takes a snapshot beyond its log, and a session
stops showing the state its log holds; a session opened elsewhere while it still runs is refused (its lease)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from agent_core import STATE_FORMAT, ToolSuccess, UserMessageReceived, encode_state, replay, state_digest
from effects import (
    ConcurrencyError,
    EventStore,
    Session,
    SessionJournal,
    SessionLeased,
    Snapshot,
    SqliteStore,
    load_state,
    open_session,
    replay_session,
    tool,
)
from effects.testing import ManualClock, ScriptedModel, call_tools, say

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


@pytest.mark.anyio
async def test_a_session_opened_while_it_still_runs_elsewhere_is_refused_and_the_live_one_goes_on(
    tmp_path: Path,
) -> None:
    live_store, other_store = SqliteStore(tmp_path / "log.db"), SqliteStore(tmp_path / "log.db")  # two processes
    running, release = anyio.Event(), anyio.Event()

    @tool
    async def pay(amount: int) -> str:
        """Pay; it returns when the test says so."""
        running.set()
        await release.wait()
        return "paid"

    clock = ManualClock(START)
    live_model = ScriptedModel([call_tools(("pay", {"amount": 5}, "p1")), say("paid")])
    other_model = ScriptedModel([say("the payment may or may not have gone through")])
    async with open_session(live_store, "s1", live_model, tools=[pay], clock=clock) as live:
        live.send("pay 5")
        await running.wait()
        with pytest.raises(SessionLeased, match="is being run by another writer"):
            async with open_session(other_store, "s1", other_model, tools=[pay], clock=clock):
                pytest.fail("the block must not run")
        release.set()  # the payment completes, and is logged: nobody declared it interrupted
        answered = await live.turn_done()
    assert other_model.calls == []
    assert answered.tool_calls["p1"].result == ToolSuccess(content="paid")
    assert replay_session(live_store, "s1", verify=True).state == answered == load_state(other_store, "s1")
    live_store.close()
    other_store.close()
