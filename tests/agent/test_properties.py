"""Properties over random scripted sessions with random cancellations, approvals and clock moves.

After every reconciliation: nothing runs that the state does not derive, and
everything it derives was started (it is running, or it ran and ended).
Folding the inputs the machine received reproduces every published state.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core import AgentState, effects_at, transition
from effects import EffectCompleted, EffectFailed, InputReceived, MachineEvent, ModelReply, Session, StateUpdated, tool
from effects.testing import ManualClock, call_tools, fail, load_older_messages, load_tool_call_results, say

from ._helpers import make_agent


@tool
async def quick(n: int) -> int:
    """Answers at once."""
    return n * 2


@tool
def flaky(n: int) -> int:
    """Fails for odd numbers (runs in a thread)."""
    if n % 2:
        raise ValueError(f"odd: {n}")
    return n


@tool(requires_approval=True)
async def gated(n: int) -> int:
    """Needs a person's approval."""
    return n


CLOCK = ManualClock()  # replaced per example; the napping tool reads the current one


@tool(timeout_ms=3000)
async def nap(ms: int) -> str:
    """Sleeps on the session's clock (parked, so the session can settle while it runs)."""
    await CLOCK.sleep_until(CLOCK.now_ms() + ms)
    return "rested"


def tool_calls() -> st.SearchStrategy[ModelReply]:
    one = st.one_of(
        st.tuples(st.sampled_from(["quick", "flaky", "gated"]), st.fixed_dictionaries({"n": st.integers(0, 3)})),
        st.tuples(st.just("nap"), st.fixed_dictionaries({"ms": st.sampled_from([10, 1000, 5000])})),
        st.tuples(st.sampled_from(["quick", "missing"]), st.just('{"n": "x"')),
    )
    return st.lists(one, min_size=1, max_size=3).map(lambda calls: call_tools(*calls))


steps = st.one_of(
    tool_calls(),
    st.text(alphabet="abc ", min_size=1, max_size=12).map(say),
    tool_calls(),
    st.booleans().map(lambda retryable: fail("flaky model", retryable=retryable)),
    st.just(load_older_messages()),
    st.lists(st.sampled_from(["call-1", "call-2", "call-3", "nope"]), max_size=2).map(
        lambda ids: load_tool_call_results(*ids)
    ),
)

send = st.tuples(st.just("send"), st.text(alphabet="xyz", min_size=1, max_size=5))
actions = st.tuples(
    send,
    st.lists(
        st.one_of(
            send,
            st.tuples(st.sampled_from(["cancel", "approve", "deny", "settle", "tick"]), st.just("")),
            st.tuples(st.just("advance"), st.sampled_from(["500", "1000", "5000", "40000"])),
        ),
        max_size=14,
    ),
).map(lambda first_and_rest: [first_and_rest[0], *first_and_rest[1]])


class Watcher:
    """Checks the reconciliation property and the fold at every event the machine publishes."""

    def __init__(self, session: Session, start: AgentState) -> None:
        self.session = session
        self.folded = start
        self.ended: set[str] = set()
        self.failed: list[MachineEvent] = []
        session.subscribe(self)

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, InputReceived):
            self.folded = transition(self.folded, event.input)
        elif isinstance(event, StateUpdated):
            assert event.state == self.folded
        elif isinstance(event, EffectCompleted):
            self.ended.add(event.key)
        elif isinstance(event, EffectFailed):
            self.failed.append(event)
        self.check()

    def check(self) -> None:
        machine = self.session.machine
        wanted = effects_at(machine.current()).keys()
        running = set(machine.running_keys())
        assert running <= wanted, f"running but not derived: {running - wanted}"
        assert wanted - running <= self.ended, f"derived but never started: {wanted - running - self.ended}"


async def play(script: list[ModelReply | Exception], plan: list[tuple[str, str]]) -> None:
    global CLOCK
    agent, _, clock = make_agent(script, tools=[quick, flaky, gated, nap], max_turn_ms=60_000, initial_context_window=2)
    CLOCK = clock
    async with agent.running() as session:
        watcher = Watcher(session, session.state)
        for kind, arg in plan:
            await act(session, clock, kind, arg)
        for _ in range(6):  # let every turn finish: approve, then move time past every timer
            await session.settled()
            for call_id in session.state.turn.awaiting_ids if session.state.turn else ():
                session.approve(call_id)
            clock.advance(60_000)
        await session.settled()
        watcher.check()
        assert not watcher.failed
        assert watcher.folded == session.state


async def act(session: Session, clock: ManualClock, kind: str, arg: str) -> None:
    if kind == "send":
        session.send(arg)
    elif kind == "cancel" and session.state.turn is not None:
        session.cancel("random cancel")
    elif kind in ("approve", "deny") and session.state.turn is not None:
        for call_id in session.state.turn.awaiting_ids:
            session.approve(call_id) if kind == "approve" else session.deny(call_id, "no")
    elif kind == "advance":
        clock.advance(int(arg))
    elif kind == "settle":
        await session.settled()
    else:
        await anyio.lowlevel.checkpoint()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@given(script=st.lists(steps, min_size=3, max_size=16), plan=actions)
def test_running_effects_follow_the_state_and_the_log_replays(
    backend: str, script: list[Any], plan: list[tuple[str, str]]
) -> None:
    anyio.run(play, script, plan, backend=backend)
