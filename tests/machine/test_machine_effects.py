"""Running effects in the async Machine: failure, cancellation, parking, threads, stop and resume. asyncio and trio."""

import threading

import anyio
import pytest

from effects import (
    EffectCanceled,
    EffectFailed,
    EffectInputRefused,
    EffectStarted,
    InputRejected,
    MachineEvent,
    StateUpdated,
    parked,
)

from ._counter import Counter, Dispatch, Inc, Journal, SetLimit, StartJob, StopJob, idle, machine

pytestmark = pytest.mark.anyio


async def test_a_raising_effect_is_reported_then_stops_the_machine_with_its_error() -> None:
    """Exceptions always propagate: an effect's bug leaves running() as itself, after effect-failed."""
    others: list[str] = []

    async def flaky(dispatch: Dispatch) -> None:
        raise ValueError("attempt 1 failed")

    async def patient(dispatch: Dispatch) -> None:
        try:
            async with parked():
                await anyio.sleep_forever()
        finally:
            others.append("cancelled")

    m, timeline = machine(jobs={"flaky": flaky, "patient": patient})
    with pytest.raises(ValueError, match="attempt 1 failed") as caught:
        async with m.running():
            m.dispatch(StartJob("patient"))
            await m.settled()
            m.dispatch(StartJob("flaky"))
            await m.settled()
            raise AssertionError("not reached: the failure cancels the block")
    assert caught.value.__notes__ == ["raised by effect 'job:flaky' ('flaky')"]
    (failure,) = timeline.of(EffectFailed)
    assert (failure.key, failure.effect, failure.error) == ("job:flaky", "flaky", caught.value)
    assert others == ["cancelled"]  # every other effect was cancelled
    assert m.running_keys() == ()


async def test_run_effect_raising_stops_the_machine_too() -> None:
    m, timeline = machine(jobs={})
    with pytest.raises(KeyError) as caught:
        async with m.running():
            m.dispatch(StartJob("unknown"))
            await m.settled()
    assert caught.value.__notes__ == ["raised by run_effect for effect 'job:unknown'"]
    (failure,) = timeline.of(EffectFailed)
    assert failure.key == "job:unknown"
    assert failure.error is caught.value


async def test_a_cancelled_effect_is_really_cancelled_and_its_late_dispatches_are_dropped() -> None:
    captured: list[Dispatch] = []
    cleanup: list[str] = []

    async def slow(dispatch: Dispatch) -> None:
        captured.append(dispatch)
        try:
            async with parked():
                await anyio.Event().wait()
        finally:
            cleanup.append("cancelled")
            dispatch(Inc(by=100))  # too late: dropped

    m, timeline = machine(jobs={"slow": slow})
    async with m.running():
        m.dispatch(StartJob("slow"))
        await m.settled()
        m.dispatch(StopJob("slow"))
        await m.settled()
        assert cleanup == ["cancelled"]
        captured[0](Inc(by=1000))  # a dispatch kept after cancellation: dropped too
        await m.settled()
        assert m.current() == Counter()
    assert timeline.of(EffectCanceled) == [
        EffectCanceled(key="job:slow", effect="slow", reason="key no longer derived")
    ]
    assert [e.input for e in timeline.of(StateUpdated)] == [StartJob("slow"), StopJob("slow")]


async def test_settled_counts_a_parked_effect_as_waiting_and_resumes_with_it() -> None:
    gate = anyio.Event()

    async def waiter(dispatch: Dispatch) -> None:
        async with parked():
            await gate.wait()
        dispatch(Inc(by=5))

    m, _ = machine(jobs={"w": waiter})
    with anyio.fail_after(5):  # were parking ignored, settled() would wait forever
        async with m.running():
            m.dispatch(StartJob("w"))
            await m.settled()
            assert m.current() == Counter(jobs=("w",))
            assert m.running_keys() == ("job:w",)
            gate.set()  # the outside world moves; the effect is parked until it runs again
            await m.settled()
            assert m.current() == Counter(count=5, jobs=("w",))
            assert m.running_keys() == ()


async def test_settled_waits_for_an_effect_that_is_not_parked() -> None:
    entered, gate = anyio.Event(), anyio.Event()
    order: list[str] = []

    async def busy(dispatch: Dispatch) -> None:
        entered.set()
        await gate.wait()  # not parked: the machine must wait for it
        dispatch(Inc())

    async def release() -> None:
        await entered.wait()
        for _ in range(10):
            await anyio.lowlevel.checkpoint()  # room for a wrong settled() to return early
        order.append("released")
        gate.set()

    m, _ = machine(jobs={"busy": busy})
    async with m.running(), anyio.create_task_group() as tg:
        tg.start_soon(release)
        m.dispatch(StartJob("busy"))
        await m.settled()
        order.append("settled")
        assert m.current().count == 1
    assert order == ["released", "settled"]


async def test_dispatch_from_another_thread() -> None:
    done = anyio.Event()
    m, _ = machine()

    def watch(event: MachineEvent) -> None:
        if isinstance(event, StateUpdated) and event.state.count == 60:
            done.set()

    def producer() -> None:
        for _ in range(30):
            m.dispatch_threadsafe(Inc())
            m.dispatch(Inc())  # plain dispatch off the loop thread is handed over safely too

    m.subscribe(watch)
    async with m.running():
        thread = threading.Thread(target=producer)
        thread.start()
        with anyio.fail_after(10):
            await done.wait()
            await anyio.to_thread.run_sync(thread.join)
            await m.settled()
        assert m.current().count == 60


async def test_dispatch_threadsafe_needs_a_running_machine() -> None:
    m, _ = machine()
    with pytest.raises(RuntimeError, match="needs a running machine, but it is stopped"):
        m.dispatch_threadsafe(Inc())


async def test_leaving_running_cancels_effects_with_a_reason_and_running_again_resumes() -> None:
    cleanup: list[str] = []

    async def slow(dispatch: Dispatch) -> None:
        try:
            await idle(dispatch)
        finally:
            cleanup.append("stopped")
            dispatch(Inc())  # dropped: the machine is stopping

    m, timeline = machine(jobs={"slow": slow})
    async with m.running():
        m.dispatch(StartJob("slow"))
        await m.settled()
    assert cleanup == ["stopped"]
    assert m.running_keys() == ()
    assert timeline.of(EffectCanceled) == [EffectCanceled(key="job:slow", effect="slow", reason="machine stopped")]
    async with m.running():  # resume: the state still derives job:slow, so it starts again
        await m.settled()
        assert m.running_keys() == ("job:slow",)
    assert [e.key for e in timeline.of(EffectStarted)] == ["job:slow", "job:slow"]
    assert m.current() == Counter(jobs=("slow",))


async def test_inputs_queued_before_start_are_applied_on_entry_and_those_left_at_exit_are_applied_without_effects() -> (
    None
):
    journal = Journal()
    m, timeline = machine(journal=journal)
    m.dispatch(SetLimit(1))
    async with m.running():
        await m.settled()
        assert m.current() == Counter(count=1, limit=1)
        m.dispatch(SetLimit(3))  # exit before the loop takes it: applied and journaled, tick:1 not started
    assert m.current() == Counter(count=1, limit=3)
    assert journal.batches == [[SetLimit(1)], [Inc()], [SetLimit(3)]]
    assert [e.key for e in timeline.of(EffectStarted)] == ["tick:0"]


async def test_an_error_in_the_block_propagates_unwrapped_and_effects_are_cancelled() -> None:
    m, timeline = machine(jobs={"a": idle})
    with pytest.raises(KeyError, match="from the host"):
        async with m.running():
            m.dispatch(StartJob("a"))
            await m.settled()
            raise KeyError("from the host")
    assert [e.reason for e in timeline.of(EffectCanceled)] == ["machine stopped"]


async def test_running_cannot_be_entered_twice_at_once() -> None:
    m, _ = machine()
    async with m.running():
        with pytest.raises(RuntimeError, match="already running"):
            async with m.running():
                pass  # pragma: no cover


async def test_effect_code_may_dispatch_from_a_worker_thread() -> None:
    async def threaded(dispatch: Dispatch) -> None:
        await anyio.to_thread.run_sync(dispatch, Inc(by=7))

    m, _ = machine(jobs={"t": threaded})
    async with m.running():
        m.dispatch(StartJob("t"))
        await m.settled()
        assert m.current() == Counter(count=7, jobs=("t",))


async def test_settled_returns_when_the_machine_stops_while_it_waits() -> None:
    async def busy(dispatch: Dispatch) -> None:
        await anyio.Event().wait()  # never parks, never ends: the machine cannot settle

    def redispatch(event: MachineEvent) -> None:
        if isinstance(event, EffectCanceled):
            m.dispatch(Inc())  # queued while stopping, so the machine is not settled after the stop either

    async def wait_for_settled() -> None:
        await m.settled()
        returned.append("settled")

    m, _ = machine(jobs={"busy": busy})
    m.subscribe(redispatch)
    returned: list[str] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg, m.running():
            m.dispatch(StartJob("busy"))
            tg.start_soon(wait_for_settled)
            await anyio.wait_all_tasks_blocked()
            assert returned == []
    assert returned == ["settled"]
    assert m.current() == Counter(jobs=("busy",))  # the Inc waits for the next start


async def test_the_cancelled_effect_sees_the_reason_of_its_cancellation() -> None:
    seen: list[str] = []

    async def watched(dispatch: Dispatch) -> None:
        try:
            await idle(dispatch)
        except BaseException as cancelled:  # asyncio's CancelledError or trio's Cancelled
            seen.append(str(cancelled))
            raise

    m, _ = machine(jobs={"w": watched})
    async with m.running():
        m.dispatch(StartJob("w"))
        await m.settled()
        m.dispatch(StopJob("w"))
        await m.settled()
        m.dispatch(StartJob("w"))
        await m.settled()
    assert len(seen) == 2
    assert "key no longer derived" in seen[0]
    assert "machine stopped" in seen[1]


async def test_effects_stopped_before_their_first_step_are_accounted_for() -> None:
    """Under asyncio a task cancelled before it first ran never runs its body; settling must not wait for it."""
    m, timeline = machine(jobs={"a": idle, "b": idle}, initial=Counter(jobs=("a", "b")))
    async with m.running():
        pass  # the effects were started on entry and are cancelled at once
    assert [(e.key, e.reason) for e in timeline.of(EffectCanceled)] == [
        ("job:a", "machine stopped"),
        ("job:b", "machine stopped"),
    ]
    async with m.running():
        with anyio.fail_after(5):  # a miscount would make settled() wait forever
            await m.settled()
        assert m.running_keys() == ("job:a", "job:b")


async def test_an_error_in_the_block_still_cancels_effects_with_the_reason() -> None:
    seen: list[str] = []

    async def watched(dispatch: Dispatch) -> None:
        try:
            await idle(dispatch)
        except BaseException as cancelled:
            seen.append(str(cancelled))
            raise

    m, _ = machine(jobs={"w": watched})
    with pytest.raises(KeyError, match="from the host"):
        async with m.running():
            m.dispatch(StartJob("w"))
            await m.settled()
            raise KeyError("from the host")
    assert len(seen) == 1 and "machine stopped" in seen[0]


async def test_an_input_an_effect_sends_that_the_state_refuses_stops_the_machine() -> None:
    """The effect's key is still derived, so nothing would ever move on: an error, not a quiet hang."""

    async def confused(dispatch: Dispatch) -> None:
        dispatch(SetLimit(-1))  # check refuses a negative limit

    m, _ = machine(jobs={"confused": confused})
    with pytest.raises(EffectInputRefused) as caught:
        async with m.running():
            m.dispatch(StartJob("confused"))
            with anyio.fail_after(10):
                await m.settled()
    assert caught.value.key == "job:confused"
    assert caught.value.input == SetLimit(-1)
    assert str(caught.value) == (
        "effect 'job:confused' dispatched SetLimit, which the state refused (limit must be >= 0, got -1); an effect "
        "must dispatch inputs that are valid for the state it runs in: this is a bug in the effect or the reducer"
    )


async def test_a_refused_input_from_an_effect_whose_key_is_gone_is_a_harmless_race() -> None:
    async def late(dispatch: Dispatch) -> None:
        dispatch(StopJob("late"))  # the same batch also stops it: the second StopJob is refused
        dispatch(StopJob("late"))

    m, timeline = machine(jobs={"late": late})
    async with m.running():
        m.dispatch(StartJob("late"))
        await m.settled()
    assert [e.input for e in timeline.of(InputRejected)] == [StopJob("late")]
    assert m.current() == Counter()


async def test_dispatch_committed_returns_once_the_input_is_journaled_and_applied() -> None:
    seen: list[tuple[bool, Counter, int]] = []
    journal = Journal()

    async def careful(dispatch: Dispatch) -> None:
        for inp in (Inc(by=5), SetLimit(-1)):
            accepted = await dispatch.dispatch_committed(inp)
            seen.append((accepted, m.current(), len(journal.log())))
        async with parked():
            await anyio.sleep_forever()

    m, _ = machine(jobs={"careful": careful}, journal=journal)
    async with m.running():
        m.dispatch(StartJob("careful"))
        await m.settled()
    assert seen == [
        (True, Counter(count=5, jobs=("careful",)), 2),  # applied and journaled before the effect goes on
        (False, Counter(count=5, jobs=("careful",)), 2),  # refused: nothing changed
    ]


async def test_an_effect_whose_scope_is_cancelled_before_its_task_first_ran_goes_on() -> None:
    """Under asyncio the scope is entered inline, in the task that carries the effect on once it suspends;
    cancelling it before that task first ran must reach the effect (before: the task ended, the effect never
    ran again, and settled() waited forever)."""
    scopes: list[anyio.CancelScope] = []

    async def scoped(dispatch: Dispatch) -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await anyio.sleep_forever()
        dispatch(Inc())

    m, _ = machine(jobs={"scoped": scoped})
    async with m.running():
        m.dispatch(StartJob("scoped"))
        while not scopes:  # under asyncio one pass: the batch is applied and the effect suspended inline
            await anyio.lowlevel.checkpoint()
        scopes[0].cancel()
        with anyio.fail_after(5):
            await m.settled()
        assert m.current().count == 1


async def cleanup_fails(dispatch: Dispatch) -> None:
    """An effect whose task group's task raises as it is cancelled: its error comes in a group with the cancellation."""

    async def child() -> None:
        try:
            await idle(dispatch)
        finally:
            raise KeyError("cleanup bug")

    async with anyio.create_task_group() as group:
        group.start_soon(child)
        await idle(dispatch)


async def test_a_bug_stops_the_machine_as_itself_while_another_effect_fails_as_it_is_cancelled() -> None:
    async def failing(dispatch: Dispatch) -> None:
        raise ValueError("the bug")

    m, timeline = machine(jobs={"failing": failing, "cleanup": cleanup_fails})
    with pytest.raises(ValueError, match="the bug") as caught:  # as under asyncio: the first bug, not a group
        async with m.running():
            m.dispatch(StartJob("cleanup"))
            await m.settled()
            m.dispatch(StartJob("failing"))
            await m.settled()
    assert caught.value.__notes__ == ["raised by effect 'job:failing' ('failing')"]
    assert [failure.key for failure in timeline.of(EffectFailed)] == ["job:failing"]


async def test_an_effect_failing_as_the_machine_stops_it_ends_it_like_any_cancelled_effect() -> None:
    m, timeline = machine(jobs={"cleanup": cleanup_fails})
    async with m.running():
        m.dispatch(StartJob("cleanup"))
        await m.settled()
    assert timeline.of(EffectFailed) == []
    assert [event.key for event in timeline.of(EffectCanceled)] == ["job:cleanup"]
