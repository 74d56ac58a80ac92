"""Conformance with the official A2A JS client (``@a2a-js/sdk``, run by Node) against a live agent-core server.

The card; a message answered at once (``completed``, the answer as an artifact); a streamed task that waits
for an approval (``input-required``, the pending call in a data part); the decision sent to the task; the
task read back (its history from the log); a task canceled while it waits (``canceled``, and a second cancel
refused); a task that failed (``failed`` with the reason); an unknown task (the protocol's error).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn

from agent_core import AgentConfig, LlmContext
from effects import ModelReply, SqliteStore, load_state
from effects.protocols import SessionHost, a2a_app
from effects.testing import ScriptedModel, call_tools, fail, say

from ._models import refund
from ._serving import node_script

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def answer(context: LlmContext) -> ModelReply:
    """Says hello, refunds the order it is asked to (once approved), and fails when asked to."""
    last = context.entries[-1]
    text = getattr(last, "content", "")
    if "hello" in text:
        return say("Hello! I refund orders.")
    if "please fail" in text:
        return fail("the model provider is down", retryable=False)
    if "refund order" in text:
        return call_tools(("refund", {"order": int(text.rsplit(" ", 1)[1])}), text="Let me refund it.")
    return say(f"Done: {text}")


def states(events: list[dict[str, Any]]) -> list[str]:
    found = []
    for event in events:
        payload = event["payload"]
        if payload["$case"] == "task":
            found.append("task:" + str(payload["value"]["status"]["state"]))
        elif payload["$case"] == "statusUpdate":
            found.append("status:" + str(payload["value"]["status"]["state"]))
        else:
            found.append(payload["$case"])
    return found


async def test_the_official_js_client_drives_tasks_through_every_state(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = AgentConfig(llm_max_attempts=1)
    async with SessionHost(store, ScriptedModel(answer), tools=[refund], config=config) as host:
        app = a2a_app(host, url=url + "/", name="refunds", description="Refunds orders.")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[sock]))
            async with node_script("a2a_client.mjs", url) as client:
                got = await client.line()
            server.should_exit = True

    assert (got["card"]["name"], got["card"]["capabilities"]["streaming"]) == ("refunds", True)
    # 3 = TASK_STATE_COMPLETED, 6 = INPUT_REQUIRED, 5 = CANCELED, 4 = FAILED, 2 = WORKING
    answered = got["answered"]
    assert answered["status"]["state"] == 3
    assert answered["artifacts"][0]["parts"][0]["content"]["value"] == "Hello! I refund orders."
    assert answered["id"] == f"{answered['contextId']}:1"

    streamed = states(got["streamed"])  # the task first; its state when the stream looked, then each change
    assert streamed[0].startswith("task:") and streamed[-1] == "status:6"
    assert got["pending"] == [{"tool_call_id": "call-1", "tool": "refund", "arguments": {"order": 42}}]
    assert states(got["decided"])[-2:] == ["artifactUpdate", "status:3"]

    task = got["task"]
    history = [(m["role"], m["parts"][0]["content"]["value"]) for m in task["history"]]
    assert history == [(1, "refund order 42"), (2, "Let me refund it."), (2, "Done: refunded order 42")]

    assert (got["paused"]["status"]["state"], got["canceled"]["status"]["state"]) == (6, 5)
    assert got["cancelAgain"]["message"].endswith(
        f"task '{got['paused']['id']}' is canceled; expected a working or input-required task to cancel"
    )
    failed = got["failed"]
    assert failed["status"]["state"] == 4
    assert failed["status"]["message"]["parts"][0]["content"]["value"].endswith("the model provider is down")
    assert got["unknown"]["message"].endswith(
        f"no task '{answered['contextId']}:99'; expected a task id this server gave (<contextId>:<turn>)"
    )
    # The tasks are the session's turns, as the log holds them.
    assert load_state(store, answered["contextId"]).turns == 4
    store.close()
