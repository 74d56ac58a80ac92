"""The machine's back-pressure: dispatches from outside are refused over ``max_backlog`` (from the loop's
thread and from others), inputs effects dispatch never are, and ``wait_for_room`` waits for the store."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager

import anyio
import pytest

from effects import Backpressure, Machine

from ._counter import Counter, Dispatch, Inc, Input, StartJob, check, effects_at, runner, transition

pytestmark = pytest.mark.anyio


class HeldJournal:
    """A journal whose commits complete only when the test releases them (``submit`` hands batches over)."""

    def __init__(self) -> None:
        self.committed: list[Input] = []
        self.held: list[tuple[Sequence[Input], Future[None]]] = []
        self.holding = True

    def append(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> None:
        self.committed.extend(inputs)

    def submit(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> Future[None]:
        done: Future[None] = Future()
        self.held.append((inputs, done))
        if not self.holding:
            self.release()
        return done

    def release(self) -> None:
        held, self.held = self.held, []
        for inputs, done in held:
            self.committed.extend(inputs)
            done.set_result(None)


@asynccontextmanager
async def _running(m: Machine[Counter, Input, str], journal: HeldJournal) -> AsyncIterator[None]:
    """Run ``m``; on the way out (a failed assertion too) commits go through, so stopping never waits forever."""
    async with m.running():
        try:
            yield
        finally:
            journal.holding = False
            journal.release()


async def _commit_all(journal: HeldJournal) -> None:
    """Release commits until nothing more is submitted."""
    await anyio.wait_all_tasks_blocked()
    while journal.held:
        journal.release()
        await anyio.wait_all_tasks_blocked()


def _machine(journal: HeldJournal, max_backlog: int | None, burst: int = 0) -> Machine[Counter, Input, str]:
    async def flood(dispatch: Dispatch) -> None:
        for _ in range(burst):
            dispatch(Inc())

    return Machine(
        Counter(),
        transition,
        effects_at,
        runner({"flood": flood}),
        check=check,
        journal=journal,
        max_backlog=max_backlog,
    )


async def test_inputs_from_effects_are_never_refused_and_outside_ones_are_over_the_bound() -> None:
    journal = HeldJournal()
    m = _machine(journal, max_backlog=5, burst=20)
    async with _running(m, journal):
        m.dispatch(StartJob("flood"))
        await anyio.wait_all_tasks_blocked()  # StartJob is being committed
        journal.release()
        await anyio.wait_all_tasks_blocked()  # the job ran and dispatched 20, four times the bound
        assert m.backlog() == 20
        with pytest.raises(Backpressure, match=r"holds 20 inputs not yet applied and durable, its bound \(max_backl"):
            m.dispatch(Inc())
        await _commit_all(journal)
        assert m.backlog() == 0
        m.dispatch(Inc())
        await _commit_all(journal)
        assert m.current().count == 21
    assert journal.committed.count(Inc()) == 21


async def test_a_thread_is_refused_over_the_bound_counting_inputs_on_their_way() -> None:
    journal = HeldJournal()
    m = _machine(journal, max_backlog=4)
    refused: list[Backpressure] = []

    def producer() -> None:
        for _ in range(10):
            try:
                m.dispatch_threadsafe(Inc())
            except Backpressure as error:
                refused.append(error)

    async with _running(m, journal):
        m.dispatch(Inc())
        await anyio.wait_all_tasks_blocked()  # one input committing
        thread = threading.Thread(target=producer)
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        await anyio.wait_all_tasks_blocked()
        assert len(refused) == 7  # before: all ten were queued
        assert m.backlog() == 4
        await _commit_all(journal)
        assert m.current().count == 4
    assert len(journal.committed) == 4


async def test_wait_for_room_waits_for_the_store_then_returns() -> None:
    journal = HeldJournal()
    m = _machine(journal, max_backlog=2)
    waited = anyio.Event()

    async def producer() -> None:
        await m.wait_for_room()
        m.dispatch(Inc())
        waited.set()

    async with _running(m, journal), anyio.create_task_group() as tg:
        m.dispatch(Inc())
        await anyio.wait_all_tasks_blocked()
        m.dispatch(Inc())
        tg.start_soon(producer)
        await anyio.wait_all_tasks_blocked()
        assert not waited.is_set()  # before: it returned at once
        journal.release()
        await waited.wait()
        await _commit_all(journal)
        assert m.current().count == 3


async def test_a_stopped_machine_with_a_full_backlog_says_so() -> None:
    m = _machine(HeldJournal(), max_backlog=1)
    m.dispatch(Inc())
    with pytest.raises(Backpressure):
        m.dispatch(Inc())
    with pytest.raises(RuntimeError, match=r"Machine.wait_for_room\(\): the machine is not running"):
        await m.wait_for_room()


def test_max_backlog_is_checked() -> None:
    with pytest.raises(ValueError, match=r"Machine: expected a positive int or None for max_backlog, got 0"):
        _machine(HeldJournal(), max_backlog=0)
    m = _machine(HeldJournal(), max_backlog=None)
    for _ in range(5_000):
        m.dispatch(Inc())
    assert m.backlog() == 5_000
