"""Properties over random trees of agents (depth up to 3, parallel children, failing children) run to the end,
cancelled from the root, or stopped and resumed from the store, then forked at a random record of the root
where children ran, and run on: every session of both trees keeps the reducer's invariants at every record, its log replays alone to
the state it was left in, and each tree holds together (each child's lineage names a call of its parent in
that tree, and a call that succeeded answered with its child's last answer)."""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import AgentState, LlmContext, ToolSuccess, check_invariants, initial_state, state_hash, transition
from effects import (
    Agent,
    EventStore,
    MemoryStore,
    ModelReply,
    Tool,
    fork_session,
    load_state,
    open_session,
    replay_session,
    tool,
)
from effects.testing import ManualClock, ScriptedModel, call_tools, fail, say

from ._team import question, results

Mode = Literal["finish", "cancel", "stop"]
LEAF = st.fixed_dictionaries({"act": st.sampled_from(["answer", "lookup", "hang", "fail"])})


def node(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """A child agent's task: what a leaf does, or (above the deepest level) one or two children to ask."""
    if depth == 0:
        return LEAF
    return st.one_of(LEAF, st.fixed_dictionaries({"kids": st.lists(node(depth - 1), min_size=1, max_size=2)}))


ROOTS = st.fixed_dictionaries({"kids": st.lists(node(1), min_size=1, max_size=2)})  # three levels at most


def script(context: LlmContext) -> ModelReply | Exception:
    """Every agent's model: does what its task (a node, as JSON) says."""
    task, found = json.loads(question(context)), results(context)
    if "kids" in task:
        if not found:  # all children at once: they run in parallel
            return call_tools(*(("agent", {"task": json.dumps(k)}, f"k{i}") for i, k in enumerate(task["kids"])))
        return say(" | ".join(r.content + (" (failed)" if r.is_error else "") for r in found))
    if task["act"] == "fail":
        return fail("the model refused", retryable=False)
    if task["act"] == "answer" or found:
        return say(f"{task['act']}: {found[0].content if found else 'done'}")
    return call_tools((task["act"], {"n": 1}, "t1"))


def hangs(task: dict[str, Any]) -> int:
    """How many leaves of the tree wait in ``hang``."""
    return sum(map(hangs, task["kids"])) if "kids" in task else int(task["act"] == "hang")


class Hanging:
    """The ``hang`` tool's gate: calls wait until released; ``all_in`` is set once ``expected`` calls wait."""

    def __init__(self, expected: int) -> None:
        self.expected, self.inside, self.all_in, self.released = expected, 0, anyio.Event(), anyio.Event()


def agents(gate: Hanging, clock: ManualClock) -> list[Tool[..., Any]]:
    """The root's tools: ``lookup``, ``hang``, and ``agent``, a child with the same tools, down to the third level."""

    @tool
    def lookup(n: int) -> str:
        """Look something up (a millisecond passes: a fork point falls between records stamped apart)."""
        clock.advance(1)
        return f"fact {n}"

    @tool
    async def hang(n: int) -> str:
        """Wait for the test (not idempotent: a resumed session completes it as interrupted)."""
        gate.inside += 1
        if gate.inside == gate.expected:
            gate.all_in.set()
        await gate.released.wait()
        return "late"

    tools: list[Tool[..., Any]] = [lookup, hang]
    for _ in range(2):
        child = Agent(ScriptedModel(script), tools=tools, clock=clock)
        tools = [lookup, hang, child.as_tool("agent", "Ask a child agent.")]
    return tools


async def play(tree: dict[str, Any], mode: Mode, fork_at: float) -> tuple[EventStore, AgentState, AgentState]:
    """Run the tree as ``mode`` says, then fork its root at a record where children ran (see :func:`fork_point`)
    and run the fork on; returns the store and the two roots' last states."""
    store, clock = MemoryStore(), ManualClock()
    gate = Hanging(hangs(tree))
    mode = mode if gate.expected else "finish"
    if mode == "finish":
        gate.released.set()
    model = ScriptedModel(script)
    with anyio.fail_after(10):
        async with open_session(store, "root", model, tools=agents(gate, clock), clock=clock) as session:
            session.send(json.dumps(tree))
            if mode != "finish":
                await gate.all_in.wait()
            if mode == "cancel":
                session.cancel("the test cancels")
            if mode != "stop":
                await session.turn_done()
            live = session.state
        if mode == "stop":  # the block ended with the tree mid-turn; reopened, it resumes from the logs
            gate.released.set()
            async with open_session(store, "root", model, tools=agents(gate, clock), clock=clock) as session:
                live = await session.turn_done()
        gate.released.set()
        at = fork_point(store, fork_at)
        fork_session(store, "root", at, new_id="fork")
        async with open_session(store, "fork", model, tools=agents(gate, clock), clock=clock) as session:
            forked = await session.turn_done()  # the forked children go on from where the fork cut them
    return store, live, forked


def fork_point(store: EventStore, fraction: float) -> int:
    """A record of the root's log where a child was running (``fraction`` of the way through those records):
    where the fork has to cut children that stood half-way."""
    states = records(store, "root")
    running = [n for n, s in enumerate(states, 1) if any(c.status == "running" for c in s.tool_calls.values())]
    return running[min(len(running) - 1, math.floor(fraction * len(running)))]


def records(store: EventStore, session_id: str) -> list[AgentState]:
    """The session's state after each of its records, checked against the reducer's invariants as it goes."""
    states, state = [], initial_state()
    for record in store.read(session_id):
        after = transition(state, record.decode())
        check_invariants(after, state)
        states.append(after)
        state = after
    return states


def assert_tree_holds(store: EventStore, root_id: str, root: AgentState) -> None:
    ids = {s.session_id for s in store.sessions() if s.session_id.partition(":")[0] == root_id}
    for session_id in sorted(ids):
        replayed = replay_session(store, session_id).state  # the log alone, verified
        assert state_hash(records(store, session_id)[-1]) == state_hash(replayed)
        assert state_hash(load_state(store, session_id)) == state_hash(replayed)  # as its session left it
        assert replayed.turn is None, session_id  # finished, cancelled down the tree, or resumed to the end
        lineage = replayed.config.lineage
        if lineage is None:
            assert session_id == root_id and state_hash(replayed) == state_hash(root)
            continue
        assert lineage.root_session_id == root_id and lineage.parent_session_id in ids
        parent = load_state(store, lineage.parent_session_id)
        call = parent.tool_calls[lineage.parent_tool_call_id]
        assert call.name == "agent" and call.status == "completed" and call.result is not None
        if isinstance(call.result, ToolSuccess):
            answers = [replayed.messages[i] for i in range(len(replayed.messages))]
            assert call.result.content == [m.content for m in answers if m.role == "assistant"][-1]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=max(4, settings().max_examples // 4))
@given(tree=ROOTS, mode=st.sampled_from(["finish", "cancel", "stop"]), fork_at=st.floats(0, 1))
def test_every_session_of_a_random_tree_and_of_its_fork_keeps_its_invariants_and_replays_alone(
    backend: str, tree: dict[str, Any], mode: Mode, fork_at: float
) -> None:
    store, root, fork = anyio.run(play, tree, mode, fork_at, backend=backend)
    assert_tree_holds(store, "root", root)
    assert_tree_holds(store, "fork", fork)
