"""Effects on Temporal: a vanished key cancels its activity, approvals arrive as Updates, backoffs are timers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from temporalio.client import Client

from agent_core import AgentConfig, Phase, ReActCancelled, ToolCallApproved, UserMessageReceived, phase
from effects import PostgresStore, tool
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, fail, say

from ._waiting import Waiting

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@asynccontextmanager
async def running(
    address: str, dsn: str, model: ScriptedModel, tools: list[Any], session_id: str, secrets: tuple[str, ...] = ()
) -> AsyncIterator[Any]:
    """A worker in this process and the session started; yields (client, store)."""
    client = await Client.connect(address)
    store = PostgresStore(dsn)
    queue = f"q-{uuid.uuid4().hex}"
    try:
        async with session_worker(client, store, model, tools=tools, task_queue=queue, secrets=secrets):
            await start_session(client, session_id, config=AgentConfig(retry_base_ms=200), task_queue=queue)
            yield client, store
    finally:
        store.close()


def message(text: str, n: int = 1) -> UserMessageReceived:
    return UserMessageReceived(timestamp=0, message_id=f"user-{n}", content=text)


async def test_cancelling_the_turn_cancels_the_running_tool_activity(temporal_server, postgres_dsn: str) -> None:
    waiting = Waiting()
    began, cancelled, wait_forever = waiting.began, waiting.cancelled, waiting.tool

    model = ScriptedModel([call_tools(("wait_forever", {}))])
    async with running(temporal_server.address, postgres_dsn, model, [wait_forever], "cancel") as (client, store):
        await submit(client, "cancel", message("wait"))
        await began.wait()
        seq = await submit(client, "cancel", ReActCancelled(timestamp=0, reason="enough"))
        await asyncio.wait_for(cancelled.wait(), timeout=30)  # delivered with the activity's next heartbeat
        state = await turn_done(store, "cancel", seq - 1)
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"


async def test_an_approval_submitted_as_an_update_lets_the_tool_run(temporal_server, postgres_dsn: str) -> None:
    ran: list[str] = []

    @tool(requires_approval=True)
    def send_mail(to: str) -> str:
        """Send a mail (needs a person's approval)."""
        ran.append(to)
        return "sent"

    model = ScriptedModel([call_tools(("send_mail", {"to": "ada"}, "mail-1")), say("Sent.")])
    async with running(temporal_server.address, postgres_dsn, model, [send_mail], "approve") as (client, store):
        seq = await submit(client, "approve", message("mail ada"))
        waiting = await turn_done(store, "approve", seq)
        assert phase(waiting) is Phase.AWAITING_APPROVAL and ran == []
        seq = await submit(client, "approve", ToolCallApproved(timestamp=0, tool_call_id="mail-1"))
        state = await turn_done(store, "approve", seq)
    assert ran == ["ada"]
    assert state.messages[-1].content == "Sent."


async def test_a_retry_backoff_is_a_workflow_timer(temporal_server, postgres_dsn: str) -> None:
    model = ScriptedModel([fail("overloaded"), say("Hello.")])
    async with running(temporal_server.address, postgres_dsn, model, [], "backoff") as (client, store):
        seq = await submit(client, "backoff", message("hi"))
        state = await turn_done(store, "backoff", seq)
        history = await client.get_workflow_handle("backoff").fetch_history()
    assert state.messages[-1].content == "Hello."
    timers = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToMilliseconds()
        for e in history.events
        if e.HasField("timer_started_event_attributes")
    ]
    backoff, deadline = sorted(timers)  # the retry's backoff, and the turn's deadline (30 minutes by default)
    assert backoff <= 200 and deadline > 1_700_000


async def test_a_workers_secrets_reach_neither_the_log_nor_the_workflow_history(
    temporal_server, postgres_dsn: str
) -> None:
    secret = "tmp-pass-4c3b2a1908f7"

    @tool
    def vault() -> str:
        """Reads the vault."""
        return f"the password is {secret}"

    model = ScriptedModel([call_tools(("vault", {})), say(f"It is {secret}.")])
    async with running(temporal_server.address, postgres_dsn, model, [vault], "secret", (secret,)) as (client, store):
        seq = await submit(client, "secret", message(f"mine is {secret}"), secrets=[secret])
        state = await turn_done(store, "secret", seq)
        history = await client.get_workflow_handle("secret").fetch_history()
        logged = [record.data for record in store.read("secret")]
    assert state.messages[-1].content == "It is [redacted]."
    assert any(b"[redacted]" in data for data in logged)
    assert [data for data in logged if secret.encode() in data] == []
    assert secret not in str(history.to_json())
