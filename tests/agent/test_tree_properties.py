"""Properties over random trees of agents (depth up to 3, parallel children, failing children, children whose
call waits for a person) run to the end (every waiting call decided at the root, by its address), cancelled
from the root (with calls still waiting), or stopped and resumed from the store, then forked at a random record
of the root where children ran, and run on: every session of both trees keeps the reducer's invariants at every
record, its log replays alone to the state it was left in, its turn ended, and each tree holds together (each
child's lineage names a call of its parent in that tree, a call that succeeded answered with its child's last
answer, a call its child answered reported what the child spent, and each session's roll-up is the sum of its
calls')."""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import (
    AgentState,
    LlmContext,
    Spend,
    ToolSuccess,
    check_invariants,
    initial_state,
    pending_approvals,
    spent,
    state_hash,
    transition,
)
from effects import (
    Agent,
    ChildEvent,
    EventStore,
    MachineEvent,
    MemoryStore,
    ModelReply,
    Session,
    StateUpdated,
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
LEAF = st.fixed_dictionaries({"act": st.sampled_from(["answer", "lookup", "hang", "fail", "write"])})


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


def leaves(task: dict[str, Any], act: str) -> int:
    """How many leaves of the tree do ``act``."""
    return sum(leaves(kid, act) for kid in task["kids"]) if "kids" in task else int(task["act"] == act)


def surfacing(task: dict[str, Any]) -> int:
    """How many ``write`` calls of the tree show at the root while they wait: those with no ``hang`` running
    in a child of the way down (a waiting call shows at its caller once the child has nothing else running)."""
    if "kids" not in task:
        return int(task["act"] == "write")
    if leaves(task, "hang"):
        return 0
    return sum(map(surfacing, task["kids"]))


class Writes:
    """Hears the root's events: ``all_in`` is set once ``expected`` sessions wait for a decision on their own call."""

    def __init__(self, expected: int) -> None:
        self.expected, self.waiting, self.all_in = expected, set[str](), anyio.Event()
        if not expected:
            self.all_in.set()

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, ChildEvent) and isinstance(event.event, StateUpdated):
            state: AgentState = event.event.state
            if any(c.status == "awaiting-approval" for c in state.tool_calls.values()):
                self.waiting.add(event.path[-1])
                if len(self.waiting) == self.expected:
                    self.all_in.set()


async def decided(session: Session, decisions: list[bool]) -> AgentState:
    """Wait for the turn to end, deciding at the root every call that waits below it on the way (approved or
    denied in the order of ``decisions``, over and over)."""
    made = 0
    while True:
        state = await session.turn_done()
        if state.turn is None:
            return state
        waiting = {p.address for p in session.pending_approvals}
        choices = {a: decisions[(made + i) % len(decisions)] for i, a in enumerate(sorted(waiting))}
        made += len(choices)
        session.decide({a: True if ok else "the test denies it" for a, ok in choices.items()})
        await session.machine.until(
            lambda s, asked=frozenset(waiting): not asked & {p.address for p in pending_approvals(s)}
        )


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

    @tool(requires_approval=True)
    def write(n: int) -> str:
        """Write something down (a person decides first, at the root)."""
        return f"wrote {n}"

    tools: list[Tool[..., Any]] = [lookup, hang, write]
    for _ in range(2):
        child = Agent(ScriptedModel(script), tools=tools, clock=clock)
        tools = [lookup, hang, write, child.as_tool("agent", "Ask a child agent.")]
    return tools


async def play(
    tree: dict[str, Any], mode: Mode, fork_at: float, decisions: list[bool]
) -> tuple[EventStore, AgentState, AgentState]:
    """Run the tree as ``mode`` says, then fork its root at a record where children ran (see :func:`fork_point`)
    and run the fork on; returns the store and the two roots' last states. Calls waiting for a person are
    decided at the root as they come (see :func:`decided`), but under ``cancel``: the root's turn is cancelled
    once every ``hang`` runs and every ``write`` waits."""
    store, clock = MemoryStore(), ManualClock()
    gate, writes = Hanging(leaves(tree, "hang")), Writes(leaves(tree, "write"))
    mode = mode if gate.expected or writes.expected else "finish"
    if mode == "finish" or not gate.expected:
        gate.released.set()
        gate.all_in.set()
    model = ScriptedModel(script)
    with anyio.fail_after(10):
        async with open_session(store, "root", model, tools=agents(gate, clock), clock=clock) as session:
            session.subscribe(writes)
            session.send(json.dumps(tree))
            if mode != "finish":
                await gate.all_in.wait()
                await writes.all_in.wait()
                shown = sum(map(surfacing, tree["kids"]))  # the others' calls run, their children waiting
                await session.machine.until(lambda s: len(pending_approvals(s)) == shown)
            if mode == "cancel":
                session.cancel("the test cancels")
            if mode != "stop":
                await decided(session, decisions)
            live = session.state
        if mode == "stop":  # the block ended with the tree mid-turn; reopened, it resumes from the logs
            gate.released.set()
            async with open_session(store, "root", model, tools=agents(gate, clock), clock=clock) as session:
                live = await decided(session, decisions)
        gate.released.set()
        at = fork_point(store, fork_at)
        fork_session(store, "root", at, new_id="fork")
        async with open_session(store, "fork", model, tools=agents(gate, clock), clock=clock) as session:
            forked = await decided(session, decisions)  # the forked children go on from where the fork cut them
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
        assert replayed.children_spent == rolled_up(replayed), session_id
        lineage = replayed.config.lineage
        if lineage is None:
            assert session_id == root_id and state_hash(replayed) == state_hash(root)
            continue
        assert lineage.root_session_id == root_id and lineage.parent_session_id in ids
        parent = load_state(store, lineage.parent_session_id)
        call = parent.tool_calls[lineage.parent_tool_call_id]
        assert call.name == "agent" and call.status == "completed" and call.result is not None
        if isinstance(call.result, ToolSuccess) or call.result.code == "agent-failed":  # the child answered
            assert (call.child_spent or Spend()) == spent(replayed), session_id
        if isinstance(call.result, ToolSuccess):
            answers = [replayed.messages[i] for i in range(len(replayed.messages))]
            assert call.result.content == [m.content for m in answers if m.role == "assistant"][-1]


def rolled_up(state: AgentState) -> Spend | None:
    """The sum of what the children of ``state``'s calls reported (``None``: none reported)."""
    reports = [c.child_spent for c in state.tool_calls.values() if c.child_spent is not None]
    if not reports:
        return None
    counts = {f: sum(getattr(r, f) for r in reports) for f in ("model_calls", "tool_calls", "tokens", "cost")}
    return Spend(**counts, unpriced=any(r.unpriced for r in reports))  # an unknown cost stays unknown


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=max(4, settings().max_examples // 4))
@given(
    tree=ROOTS,
    mode=st.sampled_from(["finish", "cancel", "stop"]),
    fork_at=st.floats(0, 1),
    decisions=st.lists(st.booleans(), min_size=1, max_size=3),
)
def test_every_session_of_a_random_tree_and_of_its_fork_keeps_its_invariants_and_replays_alone(
    backend: str, tree: dict[str, Any], mode: Mode, fork_at: float, decisions: list[bool]
) -> None:
    store, root, fork = anyio.run(play, tree, mode, fork_at, decisions, backend=backend)
    assert_tree_holds(store, "root", root)
    assert_tree_holds(store, "fork", fork)


@pytest.mark.slow
def test_a_root_stopped_while_its_children_close_leaves_no_lease_behind() -> None:
    # Stopping the root cancels its children's calls while grandchildren close their logs: each gives its lease
    # back even when the runner's cancellation lands in that close, so reopening the root at once resumes the
    # tree (before, about half of these runs found a grandchild still leased by the stopped run).
    tree = {"kids": [{"kids": [{"act": "answer"}, {"act": "answer"}]}, {"act": "write"}]}
    for _ in range(8):
        store, root, fork = anyio.run(play, tree, "stop", 0.0, [False], backend="asyncio")
        assert_tree_holds(store, "root", root)
        assert_tree_holds(store, "fork", fork)
