"""Agent tools under Temporal: each call's child session runs as a child workflow, its log beside its parent's."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from agent_core import AgentState, Lineage, Spend, UserMessageReceived, spent
from effects import PostgresStore, load_state, replay_session
from effects.temporal import session_worker, start_session, submit, turn_done

from ._tree_agent import planner, researcher

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def conversation(state: AgentState) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in state.messages]


def added(a: Spend, b: Spend) -> Spend:
    return Spend(
        model_calls=a.model_calls + b.model_calls,
        tool_calls=a.tool_calls + b.tool_calls,
        tokens=a.tokens + b.tokens,
        cost=a.cost + b.cost,
    )


async def in_memory(n: int) -> list[tuple[str, str]]:
    """The same tree run by one process, without Temporal: the conversation to compare with."""
    async with planner(researcher()).running() as session:
        session.send(str(n))
        return conversation(await session.turn_done())


async def test_parallel_calls_of_an_agent_tool_run_as_child_workflows(temporal_server, postgres_dsn: str) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    root = f"tree-{uuid.uuid4().hex[:8]}"
    agent = planner(researcher())
    tools = [agent.toolbox[name] for name in agent.toolbox.names()]
    async with session_worker(client, store, agent.model, tools=tools, config=agent.config, task_queue=queue):
        await start_session(client, root, task_queue=queue)
        seq = await submit(client, root, UserMessageReceived(timestamp=0, message_id="user-1", content="10"))
        final = await turn_done(store, root, seq)
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
    for session_id in [root, *children]:
        assert replay_session(store, session_id, verify=True).state == load_state(store, session_id)
    both = added(spent(states[0]), spent(states[1]))
    assert both.model_calls > 0 and final.children_spent == both
    assert spent(final).model_calls == 2 + both.model_calls  # the planner's own two model calls, and its children's
    store.close()
