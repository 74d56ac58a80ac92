"""Alarms: effects that only wait for a time, then dispatch (under asyncio a loop timer alone; under trio a task).

A test alarm reads its time left from a list the test gives it (one value per
question, then 0), so a test says how often the time is asked again and when
it has come, and waits only a few milliseconds of the loop's clock.
"""

from __future__ import annotations

import anyio
import pytest

from effects import Alarm, Controller, EffectCompleted, Machine, effect

from ._counter import Counter, Dispatch, Inc, Input, StartJob, StopJob, Timeline, effects_at, transition

pytestmark = pytest.mark.anyio


class Ring(Alarm[Input]):
    """Waits the times in ``left`` (asked one after another; 0 once they run out), then dispatches ``Inc``."""

    def __init__(self, left: list[float], boom: bool = False) -> None:
        self.left, self.boom, self.asked = left, boom, 0

    def seconds_left(self) -> float:
        self.asked += 1
        return self.left.pop(0) if self.left else 0.0

    def fire(self, dispatch: Dispatch, /) -> None:
        if self.boom:
            raise RuntimeError("the alarm's bug")
        dispatch(Inc())


def alarm_machine(alarms: dict[str, Ring]) -> tuple[Machine[Counter, Input, str], Timeline]:
    def run_effect(request: str, state: Counter, key: str) -> Controller[Input]:
        if request in alarms:
            return alarms[request]

        async def tick(dispatch: Dispatch) -> None:
            dispatch(Inc())

        return effect(tick)

    m: Machine[Counter, Input, str] = Machine(Counter(), transition, effects_at, run_effect)
    timeline = Timeline()
    m.subscribe(timeline)
    return m, timeline


async def test_an_alarm_waits_parked_then_fires_once_its_time_has_come() -> None:
    ring = Ring([0.005, 0.005])  # asked at the start, then when the timer fires (the clock moved back)
    m, timeline = alarm_machine({"wake": ring})
    async with m.running():
        m.dispatch(StartJob("wake"))
        await m.settled()  # waiting for the time only: nothing can progress without it
        assert m.current().count == 0 and m.running_keys() == ("job:wake",)
        await m.until(lambda state: state.count == 1)
        await m.settled()
    assert ring.asked == 3  # at the start, when the first timer fired (time left), when the second did
    assert timeline.brief()[-3:] == ["effect-completed job:wake", "input-received Inc(by=1)", "state-updated Inc(by=1)"]


async def test_an_alarm_whose_time_has_come_fires_at_once() -> None:
    ring = Ring([])
    m, _ = alarm_machine({"now": ring})
    async with m.running():
        m.dispatch(StartJob("now"))
        await m.until(lambda state: state.count == 1)
    assert ring.asked == 1


async def test_an_alarm_no_longer_derived_is_cancelled_and_never_fires() -> None:
    ring = Ring([3600.0])
    m, timeline = alarm_machine({"later": ring})
    async with m.running():
        m.dispatch(StartJob("later"))
        with anyio.fail_after(10):  # an alarm that did not park would hold settled() for an hour
            await m.settled()
        m.dispatch(StopJob("later"))
        await m.settled()
        assert m.running_keys() == ()
    assert m.current().count == 0
    assert "effect-canceled job:later" in timeline.brief()


async def test_an_alarm_that_raises_as_it_fires_stops_the_machine_with_its_error() -> None:
    m, timeline = alarm_machine({"bad": Ring([0.001], boom=True)})
    with pytest.raises(RuntimeError, match="the alarm's bug"):
        async with m.running():
            m.dispatch(StartJob("bad"))
            await m.until(lambda state: False)
    assert "effect-failed job:bad" in timeline.brief()


async def test_many_alarms_cancelled_before_their_time_leave_the_others_on_time() -> None:
    # Under trio the cancelled alarms' entries wait in one heap: past 64 of them it is rebuilt without them,
    # keeping the alarms still waiting (``early``, started before them, and ``later``).
    alarms = {f"late{n}": Ring([3600.0]) for n in range(150)}
    alarms["early"], alarms["later"] = Ring([0.5]), Ring([3600.0])
    m, timeline = alarm_machine(alarms)
    async with m.running():
        m.dispatch(StartJob("early"))
        m.dispatch(StartJob("later"))
        for n in range(0, 150, 2):
            m.dispatch(StartJob(f"late{n}"))
            m.dispatch(StartJob(f"late{n + 1}"))
            await m.settled()
            m.dispatch(StopJob(f"late{n}"))
            m.dispatch(StopJob(f"late{n + 1}"))
        await m.settled()
        assert m.current().count == 0  # all that in less than the early alarm's half second
        with anyio.fail_after(10):
            await m.until(lambda state: state.count == 1)
        assert m.running_keys() == ("job:later",)
    assert [event.key for event in timeline.of(EffectCompleted)] == ["job:early"]


async def test_an_alarm_run_as_a_coroutine_waits_the_same_way() -> None:
    # What a host that runs controllers itself gets from start(): the wait, asked again as each wait ends.
    ring, dispatched = Ring([0.001, 0.001]), Collected()
    await ring.start(dispatched)
    assert (dispatched.inputs, ring.asked) == ([Inc()], 3)


class Collected:
    """A :class:`~effects.Dispatch` of a host of its own: keeps what it is given."""

    def __init__(self) -> None:
        self.inputs: list[Input] = []

    def __call__(self, inp: Input, /) -> None:
        self.inputs.append(inp)

    async def dispatch_committed(self, inp: Input, /) -> bool:
        self.inputs.append(inp)
        return True

    def emit(self, event: object, /) -> None:
        """Nobody listens."""
