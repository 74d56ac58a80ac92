"""The event timeline of the async Machine: batching, reentrancy, subscribers, the journal. asyncio and trio."""

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest

from effects import InputRejected, MachineEvent, MachineStopped, StateUpdated

from ._counter import Counter, Dispatch, Inc, Journal, SetLimit, StartJob, StopJob, fold, idle, machine

pytestmark = pytest.mark.anyio


async def test_a_counter_counts_to_its_limit_through_its_own_effects() -> None:
    m, timeline = machine()
    async with m.running():
        m.dispatch(SetLimit(2))
        await m.settled()
        assert m.current() == Counter(count=2, limit=2)
        assert m.running_keys() == ()
    assert timeline.brief() == [
        "input-received SetLimit(limit=2)",
        "state-updated SetLimit(limit=2)",
        "effect-started tick:0",
        "effect-completed tick:0",
        "input-received Inc(by=1)",
        "state-updated Inc(by=1)",
        "effect-started tick:1",
        "effect-completed tick:1",
        "input-received Inc(by=1)",
        "state-updated Inc(by=1)",
    ]


async def test_inputs_of_one_loop_turn_are_one_batch_with_one_reconciliation() -> None:
    journal = Journal()
    m, timeline = machine(journal=journal, jobs={"b": idle})
    async with m.running():
        m.dispatch(StartJob("a"))
        m.dispatch(SetLimit(-1))
        m.dispatch(StopJob("a"))
        m.dispatch(StartJob("b"))
        await m.settled()
        assert journal.batches == [[StartJob("a"), StopJob("a"), StartJob("b")]]
        # job:a was derived only in between: the final state wants job:b alone.
        assert timeline.brief()[:8] == [
            "input-received StartJob(name='a')",
            "state-updated StartJob(name='a')",
            "input-rejected SetLimit(limit=-1)",
            "input-received StopJob(name='a')",
            "state-updated StopJob(name='a')",
            "input-received StartJob(name='b')",
            "state-updated StartJob(name='b')",
            "effect-started job:b",
        ]
    states = [e.state for e in timeline.of(StateUpdated)]
    assert states == [Counter(jobs=("a",)), Counter(), Counter(jobs=("b",))]
    assert journal.states == [states]  # the journal got the states subscribers saw, one per accepted input


@pytest.mark.parametrize("strict", [False, True], ids=["check", "rejects"])
async def test_a_rejected_input_changes_nothing_and_is_reported_with_its_rejection(strict: bool) -> None:
    journal = Journal()
    m, timeline = machine(journal=journal, strict=strict)
    async with m.running():
        m.dispatch(StopJob("ghost"))
        await m.settled()
    assert m.current() == Counter()
    assert journal.batches == []
    assert timeline.of(InputRejected) == [InputRejected(input=StopJob("ghost"), rejection="job 'ghost' is not running")]


async def test_inputs_dispatched_by_a_subscriber_are_applied_after_the_batch_in_order() -> None:
    journal = Journal()
    m, timeline = machine(jobs={"a": idle, "b": idle}, journal=journal)

    def react(event: MachineEvent) -> None:
        if isinstance(event, StateUpdated) and event.input == StartJob("a"):
            m.dispatch(Inc(by=10))
            m.dispatch(Inc(by=20))
            assert m.current() == Counter(jobs=("a", "b"))  # the batch's state, not yet the new inputs

    m.subscribe(react)
    async with m.running():
        m.dispatch(StartJob("a"))
        m.dispatch(StartJob("b"))
        await m.settled()
        assert m.current() == Counter(count=30, jobs=("a", "b"))
    assert journal.batches == [[StartJob("a"), StartJob("b")], [Inc(by=10), Inc(by=20)]]
    assert timeline.brief()[4:10] == [
        "effect-started job:a",
        "effect-started job:b",
        "input-received Inc(by=10)",
        "state-updated Inc(by=10)",
        "input-received Inc(by=20)",
        "state-updated Inc(by=20)",
    ]


async def test_every_state_a_subscriber_sees_is_the_fold_of_the_journaled_log() -> None:
    journal = Journal()
    m, timeline = machine(journal=journal)

    def more(event: MachineEvent) -> None:
        if isinstance(event, StateUpdated) and event.state.count == 2 and not event.state.jobs:
            m.dispatch(StartJob("late"))

    m.subscribe(more)
    async with m.running():
        m.dispatch(SetLimit(4))
        m.dispatch(Inc())
        await m.settled()
    log = journal.log()
    updates = timeline.of(StateUpdated)
    assert len(updates) == len(log) == 6
    for i, event in enumerate(updates):
        assert event.input == log[i]
        assert event.state == fold(log[: i + 1])
    assert m.current() == fold(log) == Counter(count=4, limit=4, jobs=("late",))


async def test_a_raising_subscriber_stops_the_machine_with_its_error() -> None:
    """A subscriber's bug surfaces where someone can act on it: an assertion in a test's subscriber fails the test."""
    seen: list[str] = []

    def broken(event: MachineEvent) -> None:
        seen.append(event.type)
        assert event.type != "effect-started", "the subscriber's own check failed"

    m, _ = machine()
    m.subscribe(broken)
    with pytest.raises(AssertionError, match="the subscriber's own check failed") as caught:
        async with m.running():
            m.dispatch(SetLimit(3))
            await m.settled()
            raise AssertionError("not reached: the failing subscriber cancels the block")
    assert "raised by subscriber" in "".join(caught.value.__notes__)
    assert seen == ["input-received", "state-updated", "effect-started"]
    assert m.current() == Counter(count=0, limit=3)  # the batch was applied; nothing ran after the failure
    assert m.running_keys() == ()


async def test_a_raising_subscriber_in_a_task_of_its_own_is_told_by_settled_and_until() -> None:
    def broken(event: MachineEvent) -> None:
        if event.type == "effect-completed":
            raise ValueError("subscriber bug")

    m, _ = machine()
    m.subscribe(broken)
    outcomes: list[BaseException] = []

    async def waiter(wait: Callable[[], Awaitable[object]]) -> None:
        try:
            await wait()
        except MachineStopped as error:
            outcomes.append(error)

    with pytest.raises(ExceptionGroup) as caught:  # the test's own task group wraps the error
        async with anyio.create_task_group() as tg, m.running():
            tg.start_soon(waiter, m.settled)
            tg.start_soon(waiter, lambda: m.until(lambda state: state.count >= 3))
            await anyio.lowlevel.checkpoint()
            m.dispatch(SetLimit(3))
            with anyio.fail_after(10):  # a hang here means the failure did not propagate
                await anyio.sleep_forever()
    assert caught.group_contains(ValueError, match="subscriber bug", depth=1)
    assert [type(e.__cause__) for e in outcomes] == [ValueError, ValueError]


async def test_unsubscribe_stops_delivery_and_can_be_called_twice() -> None:
    m, timeline = machine()
    seen: list[str] = []
    unsubscribe = m.subscribe(lambda event: seen.append(event.type))
    async with m.running():
        m.dispatch(Inc())
        await m.settled()
        unsubscribe()
        unsubscribe()
        m.dispatch(Inc())
        await m.settled()
    assert seen == ["input-received", "state-updated"]
    assert len(timeline.events) == 4


async def test_the_journal_is_written_before_subscribers_see_states_and_before_effects_start() -> None:
    calls: list[object] = []

    async def job(dispatch: Dispatch) -> None:
        calls.append("job a ran")

    m, _ = machine(jobs={"a": job}, journal=Journal(calls))
    m.subscribe(lambda event: calls.append(event.type))
    async with m.running():
        m.dispatch(Inc())
        m.dispatch(StartJob("a"))
        await m.settled()
    assert calls == [
        ("journal", [Inc(), StartJob("a")]),
        "input-received",
        "state-updated",
        "input-received",
        "state-updated",
        "effect-started",
        "job a ran",
        "effect-completed",
    ]


async def test_a_failing_journal_stops_the_machine_and_nothing_after_it_runs() -> None:
    ran: list[str] = []

    async def job(dispatch: Dispatch) -> None:
        ran.append("job")

    journal = Journal(refuse=Inc(by=13))
    m, timeline = machine(jobs={"b": job}, journal=journal)
    with pytest.raises(OSError, match=r"cannot write Inc\(by=13\): disk full"):
        async with m.running():
            m.dispatch(Inc())
            await m.settled()
            m.dispatch(Inc(by=13))
            m.dispatch(StartJob("b"))
            await m.settled()
            pytest.fail("settled() returned although the machine stopped")
    assert m.current() == Counter(count=1)
    assert ran == []
    assert journal.log() == [Inc()]
    assert [e.input for e in timeline.of(StateUpdated)] == [Inc()]


async def test_custom_events_reach_subscribers_and_are_not_journaled() -> None:
    class Chunk(MachineEvent, frozen=True):
        type = "text-chunk"
        text: str

    async def stream(dispatch: Dispatch) -> None:
        for text in ("hel", "lo"):
            m.emit(Chunk(text=text))
        dispatch(Inc())

    journal = Journal()
    m, timeline = machine(jobs={"s": stream}, journal=journal)
    async with m.running():
        m.dispatch(StartJob("s"))
        await m.settled()
    assert [c.text for c in timeline.of(Chunk)] == ["hel", "lo"]
    assert journal.batches == [[StartJob("s")], [Inc()]]
