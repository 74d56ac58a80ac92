"""A retried tool call on Temporal: each attempt is an activity of its own, and the log replays."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from agent_core import ToolSuccess, UserMessageReceived, tag_of
from effects import PostgresStore, retry, tool
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

attempts: list[str] = []


@tool(idempotent=True, retry=retry(3, on=(ConnectionError,), base_ms=10))
def lookup(key: str, tool_call_id: str) -> str:
    """Look a key up; the backend drops the first two calls."""
    attempts.append(tool_call_id)
    if len(attempts) <= 2:
        raise ConnectionError("backend unreachable")
    return f"value of {key}"


async def test_a_flaky_tool_is_retried_on_temporal(temporal_server, postgres_dsn: str) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    model = ScriptedModel([call_tools(("lookup", {"key": "a"}, "t1")), say("a is known")])
    async with session_worker(client, store, model, tools=[lookup], task_queue=queue):
        await start_session(client, "s-retry", task_queue=queue)
        seq = await submit(client, "s-retry", UserMessageReceived(timestamp=0, message_id="u1", content="a?"))
        state = await turn_done(store, "s-retry", seq)
    tags = [tag_of(record.decode()) for record in store.read("s-retry")]
    store.close()
    assert attempts == ["t1", "t1", "t1"]
    assert state.tool_calls["t1"].result == ToolSuccess(content="value of a")
    assert tags.count("tool-call-started") == 3 and tags.count("timer-fired") == 2
