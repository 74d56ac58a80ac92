"""A session run as a Temporal workflow whose log another writer appended to: the workflow's batch is never
taken for committed because the log merely reached the length it would have made."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError

from agent_core import ToolCallApproved, ToolCallDenied, UserMessageReceived
from effects import PostgresStore, decide, tool
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


async def test_an_approval_is_not_acknowledged_when_another_writer_logged_a_denial_first(
    temporal_server, postgres_dsn: str
) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    script = ScriptedModel([call_tools(("refund", {"order": "o-1"})), say("done")])
    async with session_worker(client, store, script, tools=[refund], task_queue=queue):
        await start_session(client, "w-1", task_queue=queue)
        seq = await submit(client, "w-1", UserMessageReceived(timestamp=0, message_id="u-1", content="refund o-1"))
        waiting = await turn_done(store, "w-1", seq)
        (call_id,) = waiting.turn.awaiting_ids  # type: ignore[union-attr]
        # A person denies it in the viewer, writing to the log directly, as the workflow is asked to approve it.
        denied_at = decide(store, "w-1", call_id, approve=False, reason="not this one")
        with pytest.raises(WorkflowUpdateFailedError):
            await submit(client, "w-1", ToolCallApproved(timestamp=0, tool_call_id=call_id))
        with pytest.raises(WorkflowFailureError) as ended:
            await client.get_workflow_handle("w-1").result()
    assert "another writer appended to it" in str(ended.value.cause)  # the append's error, as it failed the workflow
    assert store.session("w-1").length == denied_at  # the approval was never written: the log says denied
    assert isinstance(next(store.read("w-1", denied_at)).decode(), ToolCallDenied)
    store.close()
