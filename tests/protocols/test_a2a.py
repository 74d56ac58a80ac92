"""The A2A server in process: 1.0's and 0.3's method names, refused requests (the JSON-RPC error shape,
nothing written), the loopback and cross-origin rules and the authentication hook."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from effects import MemoryStore
from effects.protocols import SessionHost, a2a_app
from effects.testing import ScriptedModel, call_tools, say

from ._models import refund

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def send(text: str, message_id: str, **fields: Any) -> dict[str, Any]:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **fields}
    return {"jsonrpc": "2.0", "id": message_id, "method": "SendMessage", "params": {"message": message}}


@asynccontextmanager
async def served(store: MemoryStore, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    model = ScriptedModel([call_tools(("refund", {"order": 42}), text="Let me check."), say("Refunded.")])
    async with SessionHost(store, model, tools=[refund]) as host:
        app = a2a_app(host, url="http://127.0.0.1/", **options)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            yield http


async def test_both_method_names_and_a_decision_through_a_data_part() -> None:
    store = MemoryStore()
    async with served(store) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert card["capabilities"]["streaming"] is True
        waiting = (await http.post("/", json=send("refund 42", "m1", contextId="c1"), headers=V1)).json()["result"]
        task = waiting["task"]
        assert (task["id"], task["status"]["state"]) == ("c1:1", "TASK_STATE_INPUT_REQUIRED")
        decision = {"data": {"tool_call_id": "call-1", "approved": True}}
        body = send("", "m2", contextId="c1", taskId="c1:1")
        body["params"]["message"]["parts"] = [decision]
        done = (await http.post("/", json=body, headers=V1)).json()["result"]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["artifacts"][0]["parts"][0]["text"] == "Refunded."
        legacy = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tasks/get",
            "params": {"id": "c1:1"},
        }
        got = (await http.post("/", json=legacy)).json()["result"]
        assert (got["id"], got["status"]["state"]) == ("c1:1", "completed")  # 0.3's shape of the same task


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("unknown task", {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "c1:9"}},
     "no task 'c1:9'; expected a task id this server gave (<contextId>:<turn>)"),
    ("a decision for a call not pending", {
        **send("", "m9", contextId="c1", taskId="c1:1"),
    }, "task 'c1:1' has ended; it takes no more messages"),
    ("a message that is not text", {
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m9", "role": "ROLE_USER", "parts": [{"url": "http://x/y.png"}]}},
    }, "expected text or data parts, got a url part"),
    ("a message from the agent", {
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m9", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}},
    }, "expected a message with role ROLE_USER, got ROLE_AGENT"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "message"), REFUSED, ids=[r[0] for r in REFUSED])
async def test_a_refused_request_gets_the_json_rpc_error_and_writes_nothing(
    case: str, body: dict[str, Any], message: str
) -> None:
    store = MemoryStore()
    async with served(store) as http:
        waiting = await http.post("/", json=send("refund 42", "m1", contextId="c1"), headers=V1)
        decision = send("", "m2", contextId="c1", taskId="c1:1")
        decision["params"]["message"]["parts"] = [{"data": {"tool_call_id": "call-1", "approved": False}}]
        await http.post("/", json=decision, headers=V1)
        assert waiting.status_code == 200
        length = store.session("c1").length
        refused = (await http.post("/", json=body, headers=V1)).json()
        assert message in refused["error"]["message"], refused
        assert store.session("c1").length == length
        assert [s.session_id for s in store.sessions()] == ["c1"]


async def test_a_body_over_the_bound_is_refused_whether_its_length_is_declared_or_not() -> None:
    store = MemoryStore()
    huge = send("x" * 4_100_000, "m1", contextId="c1")
    async with served(store) as http:
        declared = await http.post("/", json=huge, headers=V1)
        assert declared.status_code == 413
        assert declared.json()["error"]["message"].startswith("the request body exceeds 4,000,000 bytes")

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
            body = json.dumps(huge).encode()
            for start in range(0, len(body), 65_536):
                yield body[start : start + 65_536]

        streamed = await http.post("/", content=chunks(), headers={**V1, "content-type": "application/json"})
        assert streamed.json()["error"]["message"] == "Payload too large", streamed.text
        assert (await http.post("/", json=send("refund 42", "m2", contextId="c2"), headers=V1)).status_code == 200
    assert [s.session_id for s in store.sessions()] == ["c2"]


async def test_cross_origin_writes_and_requests_without_credentials_are_refused() -> None:
    store = MemoryStore()
    async with served(store, authenticate=lambda request: request.headers.get("x-key") == "k") as http:
        foreign = await http.post("/", json=send("hi", "m1"), headers={**V1, "origin": "https://evil.example"})
        assert (foreign.status_code, foreign.json()["error"]["message"]) == (
            403,
            "expected a request from a loopback page, got Origin 'https://evil.example'",
        )
        anonymous = await http.post("/", json=send("hi", "m1"), headers=V1)
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["message"].startswith("expected credentials")
        card = await http.get("/.well-known/agent-card.json", headers={"x-key": "k"})
        assert card.status_code == 200
    assert store.sessions() == []
