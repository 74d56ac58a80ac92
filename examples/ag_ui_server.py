"""Serve an agent over AG-UI, and talk to it as a UI would: a message, an approval, the answer.

The agent's sessions run in a SessionHost over a SQLite log; the AG-UI endpoint
streams each turn as Server-Sent Events, every event carrying its log position.
The run pauses with an interrupt when a tool call needs approval; the client
answers it with a resume entry. Runs offline (a scripted model).

Output includes: assistant: Order 42 is refunded.
"""

import json
import socket
import tempfile

import anyio
import httpx
import uvicorn

from effects import SqliteStore, tool
from effects.protocols import SessionHost, ag_ui_app
from effects.testing import ScriptedModel, call_tools, say


@tool(requires_approval=True)
def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded order {order}"


async def run(url: str, body: dict) -> list[dict]:
    """POST an AG-UI RunAgentInput and read the event stream until the run ends or waits."""
    async with httpx.AsyncClient() as client, client.stream("POST", url, json=body) as response:
        return [json.loads(line[5:]) async for line in response.aiter_lines() if line.startswith("data:")]


async def main() -> None:
    model = ScriptedModel([call_tools(("refund", {"order": 42})), say("Order 42 is refunded.")])
    with tempfile.TemporaryDirectory() as directory:
        store = SqliteStore(f"{directory}/agent.db")
        async with SessionHost(store, model, tools=[refund]) as host, anyio.create_task_group() as group:
            sock = socket.create_server(("127.0.0.1", 0))  # loopback only: the endpoint writes into the log
            server = uvicorn.Server(uvicorn.Config(ag_ui_app(host), log_level="warning"))
            group.start_soon(lambda: server.serve(sockets=[sock]))
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/"

            ask = {
                "threadId": "support-42",
                "runId": "r1",
                "messages": [{"id": "m1", "role": "user", "content": "Refund 42"}],
            }
            events = await run(url, ask)
            [interrupt] = events[-1]["outcome"]["interrupts"]
            print("run paused:", interrupt["message"], "at", events[-1]["metadata"]["agent-core"]["position"])

            answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
            events = await run(url, {**ask, "runId": "r2", "resume": [answer]})
            texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
            print("assistant:", "".join(texts))
            server.should_exit = True
        store.close()


anyio.run(main)
