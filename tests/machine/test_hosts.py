"""Under asyncio, the tasks effects get once they first suspend: made ahead, and taken over by later effects."""

import asyncio
import threading
from typing import Any

import anyio
import pytest

from effects import parked

from ._counter import Counter, Dispatch, Inc, StartJob, StopJob, machine


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # under trio every effect is a task of the machine's nursery


def counting_tasks(made: list[str]) -> None:
    """Make the running loop record the name of every task it creates."""
    loop = asyncio.get_running_loop()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **options)
        made.append(task.get_name())
        return task

    loop.set_task_factory(factory)


@pytest.mark.anyio
async def test_effects_that_suspend_one_after_another_take_over_one_task() -> None:
    async def step(dispatch: Dispatch) -> None:
        await anyio.sleep(0)  # suspends: the effect is carried on by a task
        dispatch(Inc())

    m, _ = machine(jobs={f"j{n}": step for n in range(50)})
    made: list[str] = []
    async with m.running():
        counting_tasks(made)
        for n in range(50):
            m.dispatch(StartJob(f"j{n}"))
            await m.until(lambda state: state.count == len(state.jobs))
    assert m.current().count == 50
    assert len(made) == 1  # before: one task per effect, 50


@pytest.mark.anyio
async def test_an_effect_taking_over_the_task_of_a_cancelled_one_is_not_being_cancelled() -> None:
    seen: list[int] = []

    async def sleeper(dispatch: Dispatch) -> None:
        async with parked():
            await anyio.sleep_forever()

    async def after(dispatch: Dispatch) -> None:
        await anyio.sleep(0)
        task = asyncio.current_task()
        assert task is not None
        seen.append(task.cancelling())
        with anyio.fail_after(5):  # a scope entered in that task works as in a new one
            await anyio.sleep(0)
        dispatch(Inc())

    m, _ = machine(jobs={"sleeper": sleeper, "after": after})
    made: list[str] = []
    async with m.running():
        counting_tasks(made)
        m.dispatch(StartJob("sleeper"))
        await m.settled()
        m.dispatch(StopJob("sleeper"))  # cancels the task carrying it
        await m.until(lambda state: state == Counter())
        m.dispatch(StartJob("after"))
        with anyio.fail_after(5):
            await m.until(lambda state: state.count == 1)
    assert seen == [0]
    assert len(made) == 1  # the sleeper's task carried the second effect too


def test_leaving_the_block_ends_the_tasks_of_the_effects_it_cancels() -> None:
    """Run in a thread of its own: the exit waits for the tasks shielded from cancellation, so a task that
    waited on after its effect was cancelled would hang the test instead of failing it."""

    async def patient(dispatch: Dispatch) -> None:
        async with parked():
            await anyio.sleep_forever()

    made: list[str] = []

    async def run() -> None:
        m, _ = machine(jobs={"a": patient, "b": patient})
        async with m.running():
            counting_tasks(made)
            m.dispatch(StartJob("a"))
            m.dispatch(StartJob("b"))
            await m.settled()
        assert not [t for t in asyncio.all_tasks() if t.get_name() in made]

    errors: list[BaseException] = []

    def main() -> None:
        try:
            asyncio.run(run())
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "leaving the block did not return: a task waited on after its effect ended"
    assert errors == [] and made  # the effects had tasks, and every one ended
