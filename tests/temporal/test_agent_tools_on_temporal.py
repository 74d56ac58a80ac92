"""Agent tools under Temporal: each call's child session runs as a child workflow, its log beside its parent's."""

from __future__ import annotations

import asyncio
import collections
import signal
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from temporal_server import start_workers, stop_workers
from temporalio.client import Client

from agent_core import (
    AgentConfig,
    AgentState,
    Lineage,
    ReActCancelled,
    Spend,
    ToolFailure,
    ToolSuccess,
    UserMessageReceived,
    decode_input,
    spent,
    tag_of,
)
from effects import Agent, EventStore, PostgresStore, load_state, replay_session, session_exists, tool
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, say

from ._tree_agent import planner, researcher
from ._waiting import Waiting
from .test_failover import settled

AGENT = "temporal._tree_agent:agent"

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def conversation(state: AgentState) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in state.messages]


def added(a: Spend, b: Spend) -> Spend:
    return Spend(
        model_calls=a.model_calls + b.model_calls,
        tool_calls=a.tool_calls + b.tool_calls,
        tokens=a.tokens + b.tokens,
        cost=a.cost + b.cost,
        unpriced=a.unpriced or b.unpriced,
    )


async def in_memory(n: int) -> list[tuple[str, str]]:
    """The same tree run by one process, without Temporal: the conversation to compare with."""
    async with planner(researcher()).running() as session:
        session.send(str(n))
        return conversation(await session.turn_done())


async def asked(client: Client, store: EventStore, root: str, queue: str, message: str) -> AgentState:
    """Start the session ``root`` on ``queue``, send it ``message``, and return its state once that turn ended."""
    await start_session(client, root, task_queue=queue)
    seq = await submit(client, root, UserMessageReceived(timestamp=0, message_id="user-1", content=message))
    return await asyncio.wait_for(turn_done(store, root, seq), timeout=30)


@pytest.mark.parametrize("continue_every", [200, 3])  # 3: parent and children continue as new, mid-turn
async def test_parallel_calls_of_an_agent_tool_run_as_child_workflows(
    temporal_server, postgres_dsn: str, continue_every: int
) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    root = f"tree-{uuid.uuid4().hex[:8]}"
    agent = planner(researcher())
    tools = [agent.toolbox[name] for name in agent.toolbox.names()]
    async with session_worker(client, store, agent.model, tools=tools, config=agent.config, task_queue=queue):
        await start_session(client, root, task_queue=queue, continue_every=continue_every)
        seq = await submit(client, root, UserMessageReceived(timestamp=0, message_id="user-1", content="10"))
        final = await asyncio.wait_for(turn_done(store, root, seq), timeout=60)
        started = await children_started(client, root)
    # Each child workflow was started once: a run waits for its children before it continues as new.
    assert started == 2
    assert final.last_outcome is not None and final.last_outcome.kind == "completed"
    assert conversation(final) == await in_memory(10)  # the planner answers with both researchers' answers
    children = [f"{root}:research-{k}" for k in range(2)]  # <calling session id>:<tool call id>
    states = [load_state(store, child) for child in children]
    for k, state in enumerate(states):
        assert state.config.lineage == Lineage(
            parent_session_id=root, parent_tool_call_id=f"research-{k}", root_session_id=root, depth=1
        )
        assert conversation(state)[0] == ("user", str(10 + k))
        assert state.last_outcome is not None and state.last_outcome.kind == "completed"
        # Each call ran once, to its end: no child was stopped and started again (a run that continued as new
        # while its children ran would have ended them, and their reopened logs would close `record` as interrupted).
        assert all(isinstance(call.result, ToolSuccess) for call in state.tool_calls.values())
    for session_id in [root, *children]:
        assert replay_session(store, session_id, verify=True).state == load_state(store, session_id)
    both = added(spent(states[0]), spent(states[1]))
    assert both.model_calls > 0 and final.children_spent == both
    assert spent(final).model_calls == 2 + both.model_calls  # the planner's own two model calls, and its children's
    store.close()


SESSIONS = 6


async def test_a_tree_survives_a_killed_worker(temporal_server, postgres_dsn: str, tmp_path: Path) -> None:
    """The failover scenario with trees: two worker processes, one killed with SIGKILL while children are
    mid-call. Every session of every tree finishes, every log verifies, no call of ``record`` runs twice."""
    runs = tmp_path / "runs.txt"
    queue = f"q-{uuid.uuid4().hex}"
    env = {"AGENT_CORE_RUNS_FILE": str(runs), "AGENT_CORE_TOOL_SECONDS": "0.3"}  # long enough to be cut short
    processes = start_workers(2, temporal_server.address, postgres_dsn, queue, agent=AGENT, env=env)
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    try:
        prefix = f"tree-failover-{uuid.uuid4().hex[:8]}"
        ids = [f"{prefix}-{i}" for i in range(SESSIONS)]

        async def begin(session_id: str, n: int) -> int:
            await start_session(client, session_id, task_queue=queue, heartbeat_ms=2000)
            return await submit(
                client, session_id, UserMessageReceived(timestamp=0, message_id="user-1", content=str(n))
            )

        accepted = await asyncio.gather(*(begin(s, 10 * i) for i, s in enumerate(ids)))
        children = [f"{s}:research-{k}" for s in ids for k in range(2)]
        await calls_started(store, children[0])  # children's first calls under way, on both workers: kill one now
        processes[0].send_signal(signal.SIGKILL)
        open_turns = sum(session_exists(store, c) and load_state(store, c).turn is not None for c in children)
        assert open_turns > 0, "every child finished before the kill: the scenario tested nothing"

        finals = [await settled(client, store, s, seq, processes) for s, seq in zip(ids, accepted, strict=True)]
        expected = await asyncio.gather(*(in_memory(10 * i) for i in range(SESSIONS)))
        for session_id, final, reference in zip(ids, finals, expected, strict=True):
            assert final.last_outcome is not None and final.last_outcome.kind == "completed", session_id
            assert conversation(final) == reference, session_id
        for session_id in [*ids, *children]:
            state = load_state(store, session_id)
            assert state.turn is None and state.last_outcome is not None, session_id
            assert state.last_outcome.kind == "completed", session_id
            assert replay_session(store, session_id, verify=True).state == state
        ran = collections.Counter(runs.read_text().split())
        assert ran and max(ran.values()) == 1, [key for key, n in ran.items() if n > 1]
        cut = sum(
            r.result is not None and isinstance(r.result, ToolFailure)
            for c in children
            for r in load_state(store, c).tool_calls.values()
        )
        print(f"{open_turns} of {len(children)} children under way at the kill; {cut} calls cut short by it")
    finally:
        stop_workers(processes)
        store.close()


async def test_cancelling_the_parents_turn_ends_the_childs_turn_in_its_log(temporal_server, postgres_dsn: str) -> None:
    waiting = Waiting()
    began, cancelled, wait_forever = waiting.began, waiting.cancelled, waiting.tool

    child = Agent(ScriptedModel([call_tools(("wait_forever", {}, "w-1"))]), tools=[wait_forever])
    helper = child.as_tool("helper", "Helps.")
    root = f"cancel-tree-{uuid.uuid4().hex[:8]}"
    async with tree_worker(
        temporal_server.address, postgres_dsn, [call_tools(("helper", {"task": "go"}, "h-1"))], helper
    ) as (
        client,
        store,
        queue,
    ):
        await start_session(client, root, task_queue=queue)
        await submit(client, root, UserMessageReceived(timestamp=0, message_id="user-1", content="help"))
        await began.wait()
        seq = await submit(client, root, ReActCancelled(timestamp=0, reason="enough"))
        parent = await turn_done(store, root, seq)
        await asyncio.wait_for(cancelled.wait(), timeout=30)  # the child's activity, with its next heartbeat
        state = await asyncio.wait_for(turn_done(store, f"{root}:h-1", 2), timeout=30)
        replayed = replay_session(store, f"{root}:h-1", verify=True).state
    assert parent.last_outcome is not None and parent.last_outcome.kind == "cancelled"
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert state.last_outcome.detail == "the calling turn was cancelled"
    assert isinstance(state.tool_calls["w-1"].result, ToolFailure)  # its dangling call closed
    assert replayed == state


async def test_a_childs_spend_counts_toward_its_callers_budget_while_it_runs(
    temporal_server, postgres_dsn: str
) -> None:
    @tool
    def quick(n: int) -> str:
        """Answers at once."""
        return str(n)

    @tool
    async def wait_forever() -> str:
        """Never returns on its own."""
        await asyncio.Event().wait()
        return "unreachable"

    script = [call_tools(*(("quick", {"n": n}) for n in range(3))), call_tools(("wait_forever", {}, "w-1"))]
    child = Agent(ScriptedModel(script), tools=[quick, wait_forever])
    helper = child.as_tool("helper", "Helps.")
    root = f"budget-tree-{uuid.uuid4().hex[:8]}"
    calls = [call_tools(("helper", {"task": "go"}, "h-1"))]
    async with tree_worker(temporal_server.address, postgres_dsn, calls, helper) as (client, store, queue):
        await start_session(client, root, config=AgentConfig(max_tool_calls=3), task_queue=queue)
        seq = await submit(client, root, UserMessageReceived(timestamp=0, message_id="user-1", content="help"))
        # The child never ends on its own: only its reports, as it spends, can stop its caller's turn.
        parent = await asyncio.wait_for(turn_done(store, root, seq), timeout=30)
        state = await asyncio.wait_for(turn_done(store, f"{root}:h-1", 2), timeout=30)
    assert parent.last_outcome is not None and parent.last_outcome.kind == "failed"
    assert parent.last_outcome.reason == "max-tool-calls"
    assert parent.children_spent is not None and parent.children_spent.tool_calls >= 3
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"


async def test_a_call_out_of_time_ends_the_childs_turn_and_fails(temporal_server, postgres_dsn: str) -> None:
    @tool
    async def wait_forever() -> str:
        """Never returns on its own."""
        await asyncio.Event().wait()
        return "unreachable"

    child = Agent(ScriptedModel([call_tools(("wait_forever", {}, "w-1"))]), tools=[wait_forever])
    helper = child.as_tool("helper", "Helps.", timeout_ms=300)
    root = f"timeout-tree-{uuid.uuid4().hex[:8]}"
    calls = [call_tools(("helper", {"task": "go"}, "h-1")), say("Too slow.")]
    async with tree_worker(temporal_server.address, postgres_dsn, calls, helper) as (client, store, queue):
        parent = await asked(client, store, root, queue, "help")
        state = await asyncio.wait_for(turn_done(store, f"{root}:h-1", 2), timeout=30)
    result = parent.tool_calls["h-1"].result
    assert isinstance(result, ToolFailure) and result.code == "timeout", result
    assert parent.messages[-1].content == "Too slow."
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert isinstance(state.tool_calls["w-1"].result, ToolFailure)


async def test_a_child_waiting_for_approval_fails_the_call_with_a_reason(temporal_server, postgres_dsn: str) -> None:
    @tool(requires_approval=True)
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    child = Agent(ScriptedModel([call_tools(("refund", {"order": "o-1"}))]), tools=[refund])
    helper = child.as_tool("helper", "Helps.")
    root = f"approve-tree-{uuid.uuid4().hex[:8]}"
    script = [call_tools(("helper", {"task": "refund o-1"}, "h-1")), say("Could not.")]
    async with tree_worker(temporal_server.address, postgres_dsn, script, helper) as (client, store, queue):
        parent = await asked(client, store, root, queue, "refund")
        child_state = load_state(store, f"{root}:h-1")
    result = parent.tool_calls["h-1"].result
    assert isinstance(result, ToolFailure) and "cannot pass a decision" in result.error, result
    assert parent.messages[-1].content == "Could not."
    assert child_state.last_outcome is not None and child_state.last_outcome.kind == "cancelled"


async def test_bad_arguments_and_max_depth_fail_the_call_as_in_one_process(temporal_server, postgres_dsn: str) -> None:
    leaf = Agent(ScriptedModel([say("leaf")])).as_tool("leaf", "A leaf.", max_depth=1)
    middle = Agent(ScriptedModel([call_tools(("leaf", {"task": "x"}, "l-1")), say("middle")]), tools=[leaf])
    root = f"refused-tree-{uuid.uuid4().hex[:8]}"
    calls = [call_tools(("middle", {"nope": 1}, "m-1"), ("middle", {"task": "go"}, "m-2")), say("done")]
    async with tree_worker(temporal_server.address, postgres_dsn, calls, middle.as_tool("middle", "A middle.")) as (
        client,
        store,
        queue,
    ):
        parent = await asked(client, store, root, queue, "go")
        made = session_exists(store, f"{root}:m-1")
        child = load_state(store, f"{root}:m-2")
    refused = parent.tool_calls["m-1"].result
    assert isinstance(refused, ToolFailure) and "task" in refused.error and not made  # no session for it
    assert parent.tool_calls["m-2"].result == ToolSuccess(content="middle")
    deep = child.tool_calls["l-1"].result  # depth 2 is below the leaf's max_depth
    assert isinstance(deep, ToolFailure) and deep.code == "max-depth"


async def test_a_grandchild_runs_as_a_child_workflow_of_the_child(temporal_server, postgres_dsn: str) -> None:
    leaf = Agent(ScriptedModel([say("leaf")])).as_tool("leaf", "A leaf.")
    middle = Agent(ScriptedModel([call_tools(("leaf", {"task": "x"}, "l-1")), say("middle")]), tools=[leaf])
    root = f"deep-tree-{uuid.uuid4().hex[:8]}"
    calls = [call_tools(("middle", {"task": "go"}, "m-1")), say("done")]
    async with tree_worker(temporal_server.address, postgres_dsn, calls, middle.as_tool("middle", "A middle.")) as (
        client,
        store,
        queue,
    ):
        parent = await asked(client, store, root, queue, "go")
        child, grandchild = load_state(store, f"{root}:m-1"), load_state(store, f"{root}:m-1:l-1")
        for session_id in (root, f"{root}:m-1", f"{root}:m-1:l-1"):
            assert replay_session(store, session_id, verify=True).state == load_state(store, session_id)
    assert grandchild.config.lineage == Lineage(
        parent_session_id=f"{root}:m-1", parent_tool_call_id="l-1", root_session_id=root, depth=2
    )
    assert child.tool_calls["l-1"].result == ToolSuccess(content="leaf")
    assert parent.tool_calls["m-1"].result == ToolSuccess(content="middle")
    # The grandchild's model call counts in its parent's spend, and so in the root's.
    assert parent.children_spent is not None and parent.children_spent.model_calls == 3


async def test_a_worker_refuses_two_agents_behind_one_agent_tool_name(temporal_server, postgres_dsn: str) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    inner = researcher().as_tool("research", "Ask a researcher.")
    middle = Agent(ScriptedModel([say("hi")]), tools=[inner]).as_tool("team", "Ask a team.")
    other = Agent(ScriptedModel([say("hi")]), tools=[middle]).as_tool("research", "Ask another researcher.")
    with pytest.raises(ValueError, match="two agent tools named 'research' run different agents"):
        session_worker(client, store, ScriptedModel([say("hi")]), tools=[other])
    store.close()


async def children_started(client: Client, workflow_id: str) -> int:
    """How many child workflows the runs of ``workflow_id`` started, over its chain of continue-as-new."""
    started, run_id = 0, ""
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id or None).fetch_history()
        started += sum(e.HasField("start_child_workflow_execution_initiated_event_attributes") for e in history.events)
        run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        if not run_id:
            return started


async def calls_started(store: PostgresStore, session_id: str) -> None:
    """Return once the session's log has a ``tool-call-started`` (woken by the store's notifications)."""
    seen = 0
    async with store.listen() as listener:
        while True:
            length = await listener.wait_for_inputs(session_id, seen)
            tags = [tag_of(decode_input(r.data, format="msgpack")) for r in store.read(session_id, seen + 1, length)]
            if "tool-call-started" in tags:
                return
            seen = length


@asynccontextmanager
async def tree_worker(
    address: str, dsn: str, script: list[Any], helper: Any
) -> AsyncIterator[tuple[Client, PostgresStore, str]]:
    """A worker in this process whose agent's model follows ``script`` and has the agent tool ``helper``."""
    client = await Client.connect(address)
    store = PostgresStore(dsn)
    queue = f"q-{uuid.uuid4().hex}"
    try:
        async with session_worker(client, store, ScriptedModel(script), tools=[helper], task_queue=queue):
            yield client, store, queue
    finally:
        store.close()
