"""One writer per session: the lease a session's writer holds in the store, its expiry, takeover and fencing.

In one process on every store (a clock the test moves stands for the time a
lease takes to expire), then with two processes on SQLite and PostgreSQL: a
second opener of a live session is refused with the holder's name; a holder
killed with SIGKILL is taken over at once (its pid is gone); a holder stopped
with SIGSTOP loses its lease once it expired, and when it wakes up the store
refuses its append (fencing) while the new writer's log stands.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core import ToolFailure
from effects import (
    INTERRUPTED,
    EventStore,
    Lease,
    LeaseTerms,
    MemoryStore,
    PostgresStore,
    SessionJournal,
    SessionLeased,
    SqliteStore,
    load_state,
    open_session,
    session_exists,
)
from effects.testing import ScriptedModel, say

from .conftest import Tamper, session

CHILD = Path(__file__).resolve().parent / "_lease_child.py"
HOST = socket.gethostname()


class Clock:
    """The lease's clock, moved by the test: a lease expires without waiting for it."""

    def __init__(self) -> None:
        self.ms = 1_767_225_600_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def two(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[EventStore, EventStore, Clock]]:
    """Two stores on one log (two writers), judging leases by one moved clock."""
    clock = Clock()
    terms = LeaseTerms(duration_ms=30_000, renew_every_ms=10_000, clock=clock)
    stores: list[EventStore]
    if request.param == "memory":
        shared = MemoryStore(lease_terms=terms)
        stores = [shared, shared]
    elif request.param == "sqlite":
        stores = [SqliteStore(tmp_path / "log.db", lease_terms=terms) for _ in range(2)]
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        stores = [PostgresStore(dsn, lease_terms=terms) for _ in range(2)]
    yield stores[0], stores[1], clock
    for store in stores:
        store.close()


def test_a_second_writer_is_refused_with_the_holder_and_the_expiry(
    two: tuple[EventStore, EventStore, Clock],
) -> None:
    first, second, clock = two
    held = first.acquire_lease("s1")  # type: ignore[attr-defined]
    clock.ms += 12_000
    with pytest.raises(SessionLeased) as refused:
        second.acquire_lease("s1")  # type: ignore[attr-defined]
    assert refused.value.holder == held
    assert str(refused.value) == (
        f"session 's1' is being run by another writer, pid {os.getpid()} on {HOST}, since 2026-01-01 00:00:00 UTC; "
        "its lease expires at 2026-01-01 00:00:30 UTC (in 18 s) unless that writer renews it, as a live one does: "
        "one writer per session. Close the session there first; if that process is gone (killed, crashed), open "
        "the session again once the lease expired"
    )
    first.renew_leases()  # type: ignore[attr-defined]
    clock.ms += 29_000  # 41 s after it was taken, 29 s after its renewal: still live
    with pytest.raises(SessionLeased):
        second.acquire_lease("s1")  # type: ignore[attr-defined]
    first.release_lease(held)  # type: ignore[attr-defined]
    assert second.acquire_lease("s1").holder == f"pid {os.getpid()} on {HOST}"  # type: ignore[attr-defined]


def test_an_expired_lease_is_taken_over_and_its_writer_fenced_off(two: tuple[EventStore, EventStore, Clock]) -> None:
    first, second, clock = two
    inputs = session(1)
    stalled = SessionJournal(first, "s1", lease=first.acquire_lease("s1"))  # type: ignore[attr-defined]
    stalled.append(inputs[:2])
    clock.ms += 30_001  # the first writer stalled past its lease
    taker = second.acquire_lease("s1")  # type: ignore[attr-defined]
    journal = SessionJournal.open(second, "s1", lease=taker)
    journal.append(inputs[2:3])
    with pytest.raises(SessionLeased) as fenced:
        stalled.append(inputs[2:4])
    assert fenced.value.taken and fenced.value.holder == taker
    assert str(fenced.value).startswith(
        f"session 's1': this writer's lease on it expired and was taken over (pid {os.getpid()} on {HOST} holds it "
        "since 2026-01-01 00:00:30 UTC): it was not renewed in time"
    )
    assert [r.decode() for r in second.read("s1")] == inputs[:3]  # nothing of the fenced batch
    journal.append(inputs[3:5])
    assert load_state(first, "s1") == load_state(second, "s1")


def test_a_group_commit_of_many_sessions_refuses_the_fenced_writer_alone(tmp_path: Path) -> None:
    """A group holding batches of several sessions: the batch of the writer whose lease was taken over is refused
    (named as fenced off), the others commit."""
    clock = Clock()
    terms = LeaseTerms(duration_ms=30_000, renew_every_ms=10_000, clock=clock)
    store, other = (SqliteStore(tmp_path / "log.db", lease_terms=terms) for _ in range(2))
    first, second = session(1, session_id="s1"), session(1, session_id="s2")
    stalled = SessionJournal(store, "s1", lease=store.acquire_lease("s1"))
    live = SessionJournal(store, "s2", lease=store.acquire_lease("s2"))
    stalled.append(first[:2])
    live.append(second[:2])
    clock.ms += 30_001
    taker = other.acquire_lease("s1")
    blocker = sqlite3.connect(tmp_path / "log.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer waits for it: the batches below gather into groups of both
    commits = [live.submit(second[2:3]), stalled.submit(first[2:4]), live.submit(second[3:5])]
    blocker.execute("ROLLBACK")
    ahead, fenced, behind = commits
    assert ahead is not None and fenced is not None and behind is not None
    ahead.result(10)
    behind.result(10)
    with pytest.raises(SessionLeased) as refused:
        fenced.result(10)
    assert refused.value.taken and refused.value.holder == taker
    assert [r.decode() for r in store.read("s2")] == second[:5]
    assert [r.decode() for r in store.read("s1")] == first[:2]
    blocker.close()
    other.close()
    store.close()


def test_a_renewal_tells_the_writer_whose_lease_was_taken(two: tuple[EventStore, EventStore, Clock]) -> None:
    first, second, clock = two
    lost: list[SessionLeased] = []
    first.acquire_lease("s1", on_lost=lost.append)  # type: ignore[attr-defined]
    clock.ms += 30_000  # expired exactly now
    taker = second.acquire_lease("s1")  # type: ignore[attr-defined]
    first.renew_leases()  # type: ignore[attr-defined]
    assert [(e.taken, e.holder) for e in lost] == [(True, taker)]
    first.renew_leases()  # type: ignore[attr-defined]
    assert len(lost) == 1  # told once; the lease is no longer this store's


def test_a_lease_is_renewed_by_the_store_without_being_asked(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db", lease_terms=LeaseTerms(duration_ms=60_000, renew_every_ms=1))
    lease = store.acquire_lease("s1")
    deadline = time.monotonic() + 10
    while store.lease("s1") == lease and time.monotonic() < deadline:  # the keeper's thread moves its expiry
        time.sleep(0.001)
    renewed = store.lease("s1")
    assert renewed is not None and renewed.owner == lease.owner and renewed.expires_at > lease.expires_at
    store.close()
    assert SqliteStore(tmp_path / "log.db").lease("s1") is None  # given back at close


@pytest.mark.anyio
async def test_open_session_refuses_a_session_running_in_this_process(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    async with open_session(store, "s1", ScriptedModel([])) as running:
        with pytest.raises(SessionLeased, match="is being run by another writer, pid"):
            async with open_session(store, "s1", ScriptedModel([])):
                pass
        assert running.state.step == 1
    async with open_session(store, "s1", ScriptedModel([say("again")])) as again:
        again.send("hello")  # released on exit: opened at once
        await again.turn_done()
    store.close()


@pytest.mark.anyio
async def test_an_open_session_cancelled_while_it_takes_the_lease_gives_it_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    blocker = sqlite3.connect(tmp_path / "log.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process writing: the take waits for it
    scope = anyio.CancelScope()

    async def opener() -> None:
        with scope:
            async with open_session(store, "s1", ScriptedModel([])):
                await anyio.sleep_forever()

    async with anyio.create_task_group() as group:
        group.start_soon(opener)
        await anyio.wait_all_tasks_blocked()  # the opener waits for its take, on a worker thread
        scope.cancel()
        blocker.execute("ROLLBACK")  # the take goes through after the cancel
    blocker.close()
    assert store.lease("s1") is None  # given back, not held (and renewed) for a session nobody runs
    store.close()


@pytest.mark.anyio
async def test_a_store_from_before_leases_opens_and_gets_them(sql_store: tuple[EventStore, Tamper]) -> None:
    store, tamper = sql_store
    SessionJournal(store, "s1").append(session(1))
    store.close()
    tamper("DROP TABLE {leases}")  # the tables as the release before leases made them
    reopen = type(store)
    where = store.path if isinstance(store, SqliteStore) else store.dsn  # type: ignore[attr-defined]
    old = reopen(where, readonly=True)
    assert old.lease("s1") is None and load_state(old, "s1").step == len(session(1))
    new = reopen(where)  # opened for writing: the table is added
    async with open_session(new, "s1", ScriptedModel([say("still here")])) as running:
        assert new.lease("s1") is not None
        running.send("hello")
        await running.turn_done()
    assert load_state(new, "s1").messages[-1].content == "still here"
    for opened_store in (old, new):
        opened_store.close()


# Two processes -------------------------------------------------------------------------------------------------------


def child(target: str) -> subprocess.Popen[str]:
    """A process running session ``s1`` on ``target``, once its tool runs (it printed ``charging``)."""
    process = subprocess.Popen(
        [sys.executable, str(CHILD), target, "s1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "charging\n"
    return process


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the two processes meet: a SQLite file or a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "log.db")
    return str(request.getfixturevalue("postgres_dsn"))


def opened(target: str, clock: Clock | None = None) -> EventStore:
    terms = LeaseTerms(clock=clock)
    if target.startswith("postgresql://"):
        return PostgresStore(target, lease_terms=terms)
    return SqliteStore(target, lease_terms=terms)


async def finish(store: EventStore) -> list[str]:
    """Open ``s1`` here, let its turn end, and return the results of its tool calls."""
    async with open_session(store, "s1", ScriptedModel([say("the charge may have failed")])) as running:
        state = await running.turn_done()
    return [str(record.result) for record in state.tool_calls.values()]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_live_writer_in_another_process_keeps_its_session_until_killed(target: str) -> None:
    holder = child(target)
    store = opened(target)
    try:
        with pytest.raises(SessionLeased) as refused:
            await finish(store)
        assert f"is being run by another writer, pid {holder.pid} on {HOST}, since" in str(refused.value)
        assert [c.status for c in load_state(store, "s1").tool_calls.values()] == ["running"]  # not "interrupted"
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        # Its pid is gone on this machine: taken over at once, the charge completed as interrupted.
        assert await finish(store) == [str(ToolFailure(error=INTERRUPTED))]
    finally:
        holder.kill()
        holder.wait()
        store.close()


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_stalled_writer_loses_its_expired_lease_and_cannot_append_after_the_takeover(target: str) -> None:
    holder = child(target)
    later = Clock()
    later.ms = time.time_ns() // 1_000_000 + 30_001  # the lease's 30 s have passed, for this process
    store = opened(target, later)
    try:
        holder.send_signal(signal.SIGSTOP)  # alive, renewing nothing
        assert await finish(store) == [str(ToolFailure(error=INTERRUPTED))]
        holder.send_signal(signal.SIGCONT)
        out, _ = holder.communicate("\n", timeout=60)  # the charge returns: its completion is refused
        assert out.startswith("error SessionLeased: session 's1': this writer's lease on it expired and was taken over")
        state = load_state(store, "s1")
        assert [str(c.result) for c in state.tool_calls.values()] == [str(ToolFailure(error=INTERRUPTED))]
        assert state.messages[-1].content == "the charge may have failed"
    finally:
        holder.kill()
        holder.wait()
        store.close()


# Any sequence of takes, releases, renewals, appends and time --------------------------------------------------------

Step = tuple[str, int]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["acquire", "release", "renew", "append"]), st.integers(0, 1)),
        st.tuples(st.just("advance"), st.sampled_from([1, 9_999, 10_000, 29_999, 30_000, 45_000])),
    ),
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_any_sequence_keeps_one_writer_and_no_append_lands_without_the_lease(
    kind: str, tmp_path_factory: pytest.TempPathFactory, steps: list[Step]
) -> None:
    clock = Clock()
    terms = LeaseTerms(duration_ms=30_000, renew_every_ms=10_000, clock=clock)
    if kind == "memory":
        shared = MemoryStore(lease_terms=terms)
        stores: list[EventStore] = [shared, shared]
    else:
        path = tmp_path_factory.mktemp("lease") / "log.db"
        stores = [SqliteStore(path, lease_terms=terms) for _ in range(2)]
    inputs = session(3)
    held: list[Lease | None] = [None, None]  # each writer's latest lease
    holder: tuple[int, str, int] | None = None  # the model: (writer, owner, expires_at)
    try:
        for op, n in steps:
            store = stores[n] if op != "advance" else stores[0]
            live = holder is not None and holder[2] > clock.ms
            if op == "advance":
                clock.ms += n
            elif op == "acquire":
                if live:
                    with pytest.raises(SessionLeased):
                        store.acquire_lease("s")  # type: ignore[attr-defined]
                else:
                    lease = store.acquire_lease("s")  # type: ignore[attr-defined]
                    held[n], holder = lease, (n, lease.owner, lease.expires_at)
            elif op == "release" and held[n] is not None:
                store.release_lease(held[n])  # type: ignore[attr-defined]
                if holder is not None and holder[1] == held[n].owner:  # type: ignore[union-attr]
                    holder = None
                held[n] = None
            elif op == "renew":
                store.renew_leases()  # type: ignore[attr-defined]
                renewing = {0, 1} if stores[0] is stores[1] else {n}  # the leases this store holds
                current = None if holder is None else held[holder[0]]
                if holder is not None and holder[0] in renewing and current is not None and current.owner == holder[1]:
                    holder = (holder[0], holder[1], clock.ms + 30_000)
            elif op == "append" and held[n] is not None:
                length = stores[0].session("s").length if session_exists(stores[0], "s") else 0
                if length == len(inputs):
                    continue
                mine = holder is not None and holder[1] == held[n].owner  # type: ignore[union-attr]
                journal = (
                    SessionJournal.open(store, "s", lease=held[n])
                    if length
                    else SessionJournal(store, "s", lease=held[n])
                )
                if mine:
                    journal.append(inputs[length : length + 1])
                else:
                    with pytest.raises(SessionLeased):
                        journal.append(inputs[length : length + 1])
                    assert (stores[0].session("s").length if length else 0) == length  # nothing landed
            found = stores[1].lease("s")  # type: ignore[attr-defined]
            assert (None if found is None else found.owner) == (None if holder is None else holder[1])
    finally:
        for opened_store in {id(s): s for s in stores}.values():
            opened_store.close()
