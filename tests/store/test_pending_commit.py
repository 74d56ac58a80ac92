"""``PendingCommit``: what a store's ``submit`` returns. Its verdict is recorded before anyone is told, it cannot
be called back, a thread can block on it, and a journal whose batch failed refuses the next one even when the
waiter of that batch gave up on it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_core import encode_input
from effects import ConcurrencyError, PendingCommit, SessionJournal, SqliteStore, load_state

from .conftest import START, session, turn


def test_a_journal_refuses_the_next_batch_after_a_commit_fails_even_if_its_waiter_cancelled(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    inputs = session(1)
    SessionJournal(store, "s1").append(inputs[:1])
    stale, ahead = SessionJournal.open(store, "s1"), SessionJournal.open(store, "s1")
    ahead.append(inputs[1:2])  # another writer went first: the stale journal's next batch must fail
    other = sqlite3.connect(tmp_path / "log.db")
    other.execute("BEGIN IMMEDIATE")  # the store's writer waits for this lock: the batch below stays in flight
    pending = stale.submit(inputs[1:2])
    assert pending is not None and not pending.done()
    assert pending.cancel() is False  # a commit in flight is never called back
    other.rollback()
    SessionJournal(store, "t").append(session(0, session_id="t"))  # committed after it: its verdict is in
    assert isinstance(pending.exception(), ConcurrencyError)
    with pytest.raises(RuntimeError, match="an earlier batch of this journal failed to commit") as refused:
        stale.submit(inputs[2:3])
    assert isinstance(refused.value.__cause__, ConcurrencyError)
    other.close()
    store.close()


def test_a_batch_handed_over_behind_a_refused_one_is_refused_not_written_after_another_writers(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "log.db")
    inputs = session(1)
    SessionJournal(store, "s1").append(inputs[:1])
    stale = SessionJournal.open(store, "s1")
    SessionJournal.open(store, "s1").append(turn(7, START + 99)[:1])  # another writer's input at record 2
    other = sqlite3.connect(tmp_path / "log.db")
    other.execute("BEGIN IMMEDIATE")  # both batches below are handed over before the writer sees either
    first, second = stale.submit(inputs[1:2]), stale.submit(inputs[2:3])
    other.rollback()
    assert first is not None and second is not None
    refused, diverged = first.exception(timeout=30), second.exception(timeout=30)
    assert isinstance(refused, ConcurrencyError) and (refused.expected, refused.actual) == (1, 2)
    # The second expects the length the log has again, but follows the first, which the store never took.
    assert isinstance(diverged, ConcurrencyError) and diverged.diverged
    assert [r.data for r in store.read("s1")] == [encode_input(i, format="msgpack") for i in inputs[:1]] + [
        encode_input(turn(7, START + 99)[0], format="msgpack")
    ]
    assert load_state(store, "s1").step == 2  # the chain holds: nothing was written onto the other's record
    with pytest.raises(RuntimeError, match="an earlier batch of this journal failed") as stopped:
        stale.submit(inputs[3:4])
    assert stopped.value.__cause__ is refused  # the journal names the first failure, the cause of the rest
    other.close()
    store.close()


def test_a_thread_blocks_until_the_verdict_and_late_callbacks_run_at_once(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    SessionJournal(store, "s1").append(session(0))
    other = sqlite3.connect(tmp_path / "log.db")
    other.execute("BEGIN IMMEDIATE")
    pending = SessionJournal.open(store, "s1").submit(session(1)[1:3])
    assert isinstance(pending, PendingCommit)
    with pytest.raises(TimeoutError, match="still in flight"):
        pending.result(timeout=0.01)
    seen: list[BaseException | None] = []
    waiter = threading.Thread(target=lambda: seen.append(pending.exception()))
    waiter.start()
    other.rollback()
    waiter.join()
    assert seen == [None] and pending.done() and not pending.cancelled()
    late: list[PendingCommit] = []
    pending.add_done_callback(late.append)
    assert late == [pending]
    assert repr(pending) == "<PendingCommit committed>"
    other.close()
    store.close()


def test_every_done_callback_runs_once_while_the_writer_settles_groups(tmp_path: Path) -> None:
    """Callbacks are added from another thread while the writer settles the groups they belong to: each runs once,
    whether the writer takes it or finds the list drained and leaves it to the adder, and every blocked thread wakes."""
    store = SqliteStore(tmp_path / "log.db", synchronous="NORMAL")
    journals = [SessionJournal(store, f"s{n}") for n in range(20)]
    batches = [session(10, session_id=f"s{n}") for n in range(20)]
    handed: list[PendingCommit] = []
    for step in range(len(batches[0])):  # one input per batch, the sessions interleaved: many groups
        for journal, inputs in zip(journals, batches, strict=True):
            pending = journal.submit(inputs[step : step + 1])
            assert isinstance(pending, PendingCommit)
            handed.append(pending)
    runs = [0] * len(handed)
    lock = threading.Lock()

    def counted(index: int) -> Callable[[PendingCommit], None]:
        def run(_: PendingCommit) -> None:
            with lock:
                runs[index] += 1

        return run

    def add() -> None:
        for index, pending in enumerate(handed):
            pending.add_done_callback(counted(index))

    adder = threading.Thread(target=add)

    def block() -> None:
        for pending in handed:
            pending.result()

    blocker = threading.Thread(target=block, daemon=True)  # a failure must not hang the test run
    adder.start()
    blocker.start()
    adder.join()
    blocker.join(timeout=30)
    assert not blocker.is_alive(), "a thread blocked on a commit was never woken"
    store.close()  # every group is settled by now
    assert runs == [1] * len(handed)
    assert all(p.done() and p.exception() is None for p in handed)
