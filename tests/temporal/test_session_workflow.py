"""A session run as a Temporal workflow, on a real dev server, logging to a real PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from agent_core import AgentConfig, InvalidInput, ToolCallApproved, UserMessageReceived
from effects import PostgresStore, tool
from effects.cli import main
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _script() -> ScriptedModel:
    return ScriptedModel([call_tools(("add", {"a": 2, "b": 3})), say("2 + 3 = 5")])


async def test_a_session_runs_to_completion_and_its_log_replays(
    temporal_server, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    async with session_worker(client, store, _script(), tools=[add], task_queue=queue):
        await start_session(client, "s-1", config=AgentConfig(max_tool_calls=5), task_queue=queue)
        seq = await submit(client, "s-1", UserMessageReceived(timestamp=0, message_id="user-1", content="2 + 3?"))
        state = await turn_done(store, "s-1", seq)
    assert [(m.role, m.content) for m in state.messages] == [("user", "2 + 3?"), ("assistant", "2 + 3 = 5")]
    assert [(c.name, c.result.content) for c in state.tool_calls.values()] == [("add", "5")]  # type: ignore[union-attr]
    length = store.session("s-1").length
    store.close()
    assert main(["replay", postgres_dsn, "s-1", "--verify"]) == 0
    assert f"session s-1: {length} records replayed" in capsys.readouterr().out


async def test_a_refused_input_returns_the_rejection(temporal_server, postgres_dsn: str) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    async with session_worker(client, store, _script(), tools=[add], task_queue=queue):
        await start_session(client, "s-2", task_queue=queue)
        with pytest.raises(InvalidInput) as refused:
            await submit(client, "s-2", ToolCallApproved(timestamp=0, tool_call_id="nope"))
        history = await client.get_workflow_handle("s-2").fetch_history()
    assert refused.value.rejection.code == "unknown-tool-call"
    # Refused by the validator (`check`): the Update was never accepted, so the history holds no trace of it.
    accepted = [e.workflow_execution_update_accepted_event_attributes for e in history.events]
    assert [a.accepted_request.input.name for a in accepted if a.accepted_request.input.name] == ["opened"]
    assert store.session("s-2").length == 1  # only session-started: nothing of the refused input was logged
    store.close()


async def test_a_user_message_delivered_again_is_acknowledged_and_not_applied_twice(
    temporal_server, postgres_dsn: str
) -> None:
    # As when a workflow task that appended the message was lost (the next attempt reloads the log with the
    # message in it) or an aborted Update was sent again: the same message (same id and text) comes once more.
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    message = UserMessageReceived(timestamp=0, message_id="user-1", content="2 + 3?")
    async with session_worker(client, store, _script(), tools=[add], task_queue=queue):
        seq = await submit(client, "s-3", message, start=True, task_queue=queue)
        length = (await turn_done(store, "s-3", seq)).step
        assert await submit(client, "s-3", message) == seq  # its seq, the log unchanged
        assert store.session("s-3").length == length
        with pytest.raises(InvalidInput) as refused:  # another text under that id is another message: refused
            await submit(client, "s-3", UserMessageReceived(timestamp=0, message_id="user-1", content="4 + 4?"))
    assert refused.value.rejection.code == "duplicate-id"
    assert store.session("s-3").length == length
    store.close()
