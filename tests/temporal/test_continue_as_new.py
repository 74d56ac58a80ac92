"""Long sessions continue as new: each run's history stays bounded, the log and the conversation go on."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from agent_core import AgentConfig, UserMessageReceived
from effects import PostgresStore, load_state, tool
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROUNDS = 12
EVERY = 10


@tool(idempotent=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _script() -> ScriptedModel:
    steps = [call_tools(("add", {"a": n, "b": n})) for n in range(ROUNDS)]
    return ScriptedModel([*steps, say("done adding"), say("hello again")])


async def _runs(client: Client, session_id: str) -> list[int]:
    """The number of history events of each run of the session's chain, oldest first."""
    handle = client.get_workflow_handle(session_id)
    run_id = (await handle.describe()).raw_description.workflow_execution_info.first_run_id
    counts = []
    while run_id:
        events = (await client.get_workflow_handle(session_id, run_id=run_id).fetch_history()).events
        counts.append(len(events))
        last = events[-1].workflow_execution_continued_as_new_event_attributes
        run_id = last.new_execution_run_id
    return counts


async def test_runs_continue_as_new_and_each_history_stays_bounded(temporal_server, postgres_dsn: str) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    async with session_worker(client, store, _script(), tools=[add], task_queue=queue):
        await start_session(
            client, "long", config=AgentConfig(max_tool_calls=50), task_queue=queue, continue_every=EVERY
        )
        seq = await submit(client, "long", UserMessageReceived(timestamp=0, message_id="user-1", content="add"))
        state = await turn_done(store, "long", seq)
        seq = await submit(client, "long", UserMessageReceived(timestamp=0, message_id="user-2", content="again"))
        state = await turn_done(store, "long", seq)
        runs = await _runs(client, "long")
    assert [m.content for m in state.messages] == ["add", "done adding", "again", "hello again"]
    assert sorted(int(c.result.content) for c in state.tool_calls.values()) == [2 * n for n in range(ROUNDS)]  # type: ignore[union-attr]
    length = store.session("long").length
    assert length > 4 * EVERY and len(runs) >= length // (EVERY + 10)
    # A run folds about EVERY inputs (a few more while its last activities finish): its history is bounded by
    # that, whatever the session's length.
    assert max(runs) <= 12 * (EVERY + 10), runs
    assert load_state(store, "long") == state
    store.close()
