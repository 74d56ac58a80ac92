"""Tool calls run within bounds: at most ``max_concurrent_per_session`` of one session at once, at most
``ProcessLimits.max_tool_calls`` of the whole process; the rest wait, ``running`` in the state, and a
waiting call ends like any other when its turn is cancelled."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.from_thread
import pytest

from agent_core import ToolFailure, ToolSuccess
from effects import Agent, ProcessLimits, Session, Toolbox, ToolLimits, set_process_limits, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder, results

pytestmark = pytest.mark.anyio


class Gates:
    """An async tool ``work`` that counts the calls inside it and waits until the test opens its gate."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.gates: list[anyio.Event] = []

        @tool
        async def work(n: int) -> str:
            """Waits until the test lets it finish."""
            gate = anyio.Event()
            self.gates.append(gate)
            self.inside += 1
            self.most = max(self.most, self.inside)
            try:
                await gate.wait()
            finally:
                self.inside -= 1
            return f"done {n}"

        self.tool = work

    def open_all(self) -> int:
        """Let every call waiting inside finish; returns how many there were."""
        waiting = [gate for gate in self.gates if not gate.is_set()]
        for gate in waiting:
            gate.set()
        return len(waiting)


@pytest.fixture
def process_limits() -> Iterator[None]:
    """Whatever a test sets with ``set_process_limits`` is undone after it."""
    previous = set_process_limits(ProcessLimits())
    yield
    set_process_limits(previous)


def _agent(calls: int, toolbox: Toolbox, session_id: str, *, answer: bool = True) -> Agent:
    script: list[Any] = [call_tools(*[("work", {"n": n}) for n in range(calls)])]
    if answer:
        script.append(say("all done"))
    return Agent(
        ScriptedModel(script), tools=toolbox, clock=ManualClock(START), ids=SequentialIds(), session_id=session_id
    )


def _statuses(session: Session) -> list[str]:
    return [record.status for record in session.state.tool_calls.values()]


async def _drain(gates: Gates, bound: int) -> int:
    """Open the gates batch by batch, checking the bound whenever everything waits; returns the batches."""
    batches = 0
    while True:
        await anyio.wait_all_tasks_blocked()
        assert gates.inside <= bound
        if not gates.open_all():
            return batches
        batches += 1


async def test_a_session_runs_at_most_its_bound_of_tool_calls_at_once() -> None:
    gates = Gates()
    toolbox = Toolbox([gates.tool], limits=ToolLimits(max_concurrent_per_session=3))
    async with _agent(10, toolbox, "s").running() as session:
        recorder = Recorder(session)
        session.send("ten at once")
        await anyio.wait_all_tasks_blocked()
        assert gates.inside == 3  # before: all ten ran at once
        assert _statuses(session) == ["running"] * 10  # the seven waiting are started, logged, waiting
        assert await _drain(gates, 3) == 4  # 3 + 3 + 3 + 1
        await session.settled()
        state = session.state

    assert gates.most == 3
    assert results(state) == {f"call-{n + 1}": ToolSuccess(content=f"done {n}") for n in range(10)}
    assert session.state.last_outcome is not None and session.state.last_outcome.kind == "completed"
    recorder.assert_replays_to(state)


async def test_sessions_of_the_process_share_its_bound(process_limits: None) -> None:
    set_process_limits(ProcessLimits(max_tool_calls=4))
    gates = Gates()
    toolbox = Toolbox([gates.tool])  # the default bound per session (16) is above the process's 4
    async with _agent(5, toolbox, "a").running() as one, _agent(5, toolbox, "b").running() as other:
        one.send("five")
        other.send("five more")
        await anyio.wait_all_tasks_blocked()
        assert gates.inside == 4  # before: all ten ran at once
        assert _statuses(one) + _statuses(other) == ["running"] * 10
        await _drain(gates, 4)
        await one.settled()
        await other.settled()
        assert len(gates.gates) == 10
        for session in (one, other):
            assert set(results(session.state).values()) == {ToolSuccess(content=f"done {n}") for n in range(5)}
    assert gates.most == 4


async def test_a_call_waiting_for_its_place_ends_when_the_turn_is_cancelled(process_limits: None) -> None:
    set_process_limits(ProcessLimits(max_tool_calls=2))
    gates = Gates()
    toolbox = Toolbox([gates.tool], limits=ToolLimits(max_concurrent_per_session=1))
    async with _agent(3, toolbox, "s", answer=False).running() as session:
        session.send("three, one at a time")
        await anyio.wait_all_tasks_blocked()
        assert gates.inside == 1  # before: all three ran at once
        assert _statuses(session) == ["running"] * 3
        session.cancel("stop waiting")
        with anyio.fail_after(10):  # nothing stays stuck waiting for a place
            await session.settled()
        state = session.state
        assert session.machine.running_keys() == ()
        assert "running" not in _statuses(session)
        assert all(isinstance(result, ToolFailure) for result in results(state).values())
        assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"

    # The places were given back: the process's two are free for a new session's calls.
    fresh = Gates()
    async with _agent(2, Toolbox([fresh.tool]), "t").running() as again:
        again.send("two")
        await anyio.wait_all_tasks_blocked()
        assert fresh.inside == 2
        fresh.open_all()
        await again.settled()
        assert len(results(again.state)) == 2


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_sync_tools_of_all_toolboxes_share_the_process_threads(process_limits: None) -> None:
    set_process_limits(ProcessLimits(max_tool_threads=3))
    release = threading.Event()
    lock = threading.Lock()
    counts = {"inside": 0, "most": 0}
    full = anyio.Event()

    @tool
    def block(n: int) -> str:
        """Blocks its thread until released."""
        with lock:
            counts["inside"] += 1
            counts["most"] = max(counts["most"], counts["inside"])
            if counts["inside"] == 3:
                anyio.from_thread.run_sync(full.set)
        release.wait(30)
        with lock:
            counts["inside"] -= 1
        return str(n)

    def agent(session_id: str) -> Agent:
        script = [call_tools(*[("block", {"n": n}) for n in range(4)]), say("done")]
        return Agent(
            ScriptedModel(script), tools=[block], clock=ManualClock(START), ids=SequentialIds(), session_id=session_id
        )

    try:
        async with agent("a").running() as one, agent("b").running() as other:
            one.send("four")
            other.send("four more")
            await full.wait()
            await anyio.wait_all_tasks_blocked()
            assert counts["inside"] == 3  # before: each toolbox's 4 (under its max_threads of 8) ran at once
            release.set()
            with anyio.fail_after(10):
                await one.settled()
                await other.settled()
            assert len(results(one.state)) == len(results(other.state)) == 4
    finally:
        release.set()
    assert counts["most"] == 3


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match=r"ToolLimits: expected a positive int or None for max_concurrent_per_se"):
        ToolLimits(max_concurrent_per_session=0)
    with pytest.raises(ValueError, match=r"ProcessLimits: expected a positive int or None for max_tool_calls, got -1"):
        ProcessLimits(max_tool_calls=-1)
    with pytest.raises(TypeError, match=r"set_process_limits: expected a ProcessLimits, got 64"):
        set_process_limits(64)  # type: ignore[arg-type]
    assert ProcessLimits() == ProcessLimits(max_tool_calls=64, max_tool_threads=32)
    assert ToolLimits().max_concurrent_per_session == 16
