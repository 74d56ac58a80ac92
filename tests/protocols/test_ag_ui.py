"""The AG-UI endpoint in process: resuming from every position, refused requests, the security rules."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from agent_core import TEXT_MARKER, LlmContext, ProviderItem
from effects import MemoryStore, ModelReply, SharedStore, TextSink, create_app, follow_store, open_session
from effects.cli.ui import mount_ag_ui
from effects.protocols import SessionHost, StoredSessions, Unauthorized, ag_ui_app, ag_ui_events
from effects.testing import ScriptedModel, call_tools, say

from ._models import refund

pytestmark = pytest.mark.anyio

LOOPBACK = "http://127.0.0.1"
START = {"threadId": "t1", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "refund 42"}]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def script() -> ScriptedModel:
    return ScriptedModel([call_tools(("refund", {"order": 42}), text="Let me check."), say("Refunded.")])


def events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]


def position(event: dict[str, Any]) -> str:
    return str(event["metadata"]["agent-core"]["position"])


@asynccontextmanager
async def client(app: Any, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=LOOPBACK, headers=headers) as c:
        yield c


@asynccontextmanager
async def finished(store: MemoryStore) -> AsyncIterator[httpx.AsyncClient]:
    """A session that asked for an approval, was approved, and answered; and a client of its endpoint."""
    async with SessionHost(store, script(), tools=[refund]) as host, client(ag_ui_app(host)) as http:
        first = events(await http.post("/", json=START))
        assert first[-1]["outcome"]["type"] == "interrupt"
        approve = {"interruptId": "call-1", "status": "resolved", "payload": {"approved": True}}
        events(await http.post("/", json={**START, "runId": "r2", "resume": [approve]}))
        yield http


async def test_every_position_resumes_with_exactly_the_events_after_it() -> None:
    store = MemoryStore()
    async with finished(store) as http:
        replay = ag_ui_events(store, "t1")
        assert [e["type"] for e in replay][-1] == "RUN_FINISHED"
        for number, event in enumerate(replay):
            got = events(await http.post("/", json={**START, "forwardedProps": {"after": position(event)}}))
            fresh = [e for e in got if not e["metadata"]["agent-core"].get("restated")]
            assert fresh == replay[number + 1 :], f"after {position(event)}"
            restated = [e for e in got if e not in fresh]
            assert all(position(e) == position(event) for e in restated)
            if restated:  # resumed inside a run: the stream reopens it first
                assert restated[0]["type"] == "RUN_STARTED" and restated[0]["runId"] == last_run(replay[: number + 1])


def last_run(events: list[dict[str, Any]]) -> str:
    return next(e["runId"] for e in reversed(events) if e["type"] == "RUN_STARTED")


async def test_the_same_request_again_writes_nothing_new() -> None:
    store = MemoryStore()
    async with finished(store) as http:
        length = store.session("t1").length
        got = events(await http.post("/", json=START))  # the whole conversation again: nothing new in it
        assert store.session("t1").length == length
        assert got == ag_ui_events(store, "t1")  # it is a connect: the session from its start


class Thinking:
    """Answers once with provider items: readable reasoning of three providers, redacted thinking, the text."""

    ITEMS = (
        ProviderItem(
            kind="thinking",
            provider="anthropic",
            data='{"type":"thinking","thinking":"Refunds need care.","signature":"s"}',
        ),
        ProviderItem(kind="redacted-thinking", provider="anthropic", data='{"type":"redacted_thinking","data":"xyz"}'),
        ProviderItem(
            kind="reasoning",
            provider="openai-responses",
            data='{"type":"reasoning","summary":[{"type":"summary_text","text":"Check the order."},'
            '{"type":"summary_text","text":"Then answer."}],"encrypted_content":"enc"}',
        ),
        ProviderItem(kind="reasoning-content", provider="openai-chat", data='{"reasoning_content":"It is 42."}'),
        ProviderItem(kind=TEXT_MARKER, provider="anthropic", chars=len("Done.")),
    )

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        return ModelReply(text="Done.", finish_reason="stop", items=self.ITEMS)


async def test_a_replys_readable_reasoning_is_sent_as_reasoning_events() -> None:
    store = MemoryStore()
    async with SessionHost(store, Thinking()) as host, client(ag_ui_app(host)) as http:
        live = events(await http.post("/", json=START))
    assert live == ag_ui_events(store, "t1")
    kinds = [e["type"] for e in live]
    reasoning = [e for e in live if e["type"] == "REASONING_MESSAGE_CONTENT"]
    assert [e["delta"] for e in reasoning] == ["Refunds need care.", "Check the order.\n\nThen answer.", "It is 42."]
    # The items are logged with the model's observation, after the message it completed: the reasoning follows.
    assert kinds.index("TEXT_MESSAGE_END") < kinds.index("REASONING_START") < kinds.index("RUN_FINISHED")
    assert kinds.count("REASONING_START") == kinds.count("REASONING_END") == 3
    assert "xyz" not in json.dumps(live) and "enc" not in json.dumps(live)  # redacted and encrypted stay out


async def test_one_run_is_followed_by_its_id_and_an_unknown_run_is_refused() -> None:
    store = MemoryStore()
    async with finished(store) as http:
        got = events(await http.get("/threads/t1/events", params={"run": "run-2"}))
        assert got[0]["type"] == "RUN_STARTED" and got[0]["runId"] == "run-2"
        assert got[-1]["outcome"]["type"] == "interrupt"
        refused = await http.get("/threads/t1/events", params={"run": "run-3"})
        assert (refused.status_code, refused.json()) == (
            404,
            {
                "type": "RUN_ERROR",
                "message": "no run 'run-3' in session 't1'; expected a run id its events carry (run-<record>)",
                "code": "unknown-run",
            },
        )


REFUSALS: list[tuple[str, dict[str, Any], int, str]] = [
    ("malformed body", {"threadId": "t1", "messages": "hello"}, 400, "expected an AG-UI RunAgentInput"),
    ("unknown thread", {**START, "threadId": "t9", "messages": []}, 404, "no session 't9'"),
    (
        "approval of a call not pending",
        {**START, "resume": [{"interruptId": "call-1", "status": "resolved", "payload": {"approved": True}}]},
        409,
        "no pending interrupt 'call-1'; expected one of: none (nothing waits)",
    ),
    (
        "position past the end",
        {**START, "forwardedProps": {"after": "99.0@00000000"}},
        400,
        "position 99.0@00000000 is past the end of session 't1', which has",
    ),
    (
        "position from another session",
        {**START, "forwardedProps": {"after": "2.0@00000000"}},
        400,
        "position 2.0@00000000 is not of session 't1''s log",
    ),
    ("malformed position", {**START, "forwardedProps": {"after": "later"}}, 400, "expected a stream position"),
    (
        "a message that is not text",
        {
            **START,
            "messages": [
                {
                    "id": "u9",
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "url", "value": "http://127.0.0.1/x.png"}}],
                }
            ],
        },
        400,
        "user message 'u9' has a image part; expected text",
    ),
]


@pytest.mark.parametrize(("case", "body", "status", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_a_refused_request_gets_the_error_shape_and_writes_nothing(
    case: str, body: dict[str, Any], status: int, message: str
) -> None:
    store = MemoryStore()
    async with finished(store) as http:
        length = store.session("t1").length
        refused = await http.post("/", json=body)
        assert refused.status_code == status
        error = refused.json()
        assert error["type"] == "RUN_ERROR" and error["message"].startswith(message), error
        assert store.session("t1").length == length


async def test_cross_origin_and_non_loopback_writes_are_refused() -> None:
    store = MemoryStore()
    async with SessionHost(store, script(), tools=[refund]) as host:
        app = ag_ui_app(host)
        async with client(app, origin="https://evil.example") as http:
            refused = await http.post("/", json=START)
            assert (refused.status_code, refused.json()["message"]) == (
                403,
                "expected a request from a loopback page, got Origin 'https://evil.example'",
            )
        async with client(app) as http:
            refused = await http.post("/", content=json.dumps(START), headers={"content-type": "text/plain"})
            assert (refused.status_code, refused.json()["message"]) == (
                403,
                "expected a JSON body (Content-Type: application/json)",
            )
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agents.example") as http:
            refused = await http.post("/", json=START)
            assert (refused.status_code, refused.json()["message"]) == (
                403,
                "expected a request to a loopback address, got Host 'agents.example'",
            )
    assert store.sessions() == []


async def test_the_authentication_hook_refuses_a_request_without_credentials() -> None:
    store = MemoryStore()

    def token(request: Any) -> bool:
        if request.headers.get("authorization", "").startswith("Bearer "):
            if request.headers["authorization"] != "Bearer s3cret":
                raise Unauthorized("expected a valid bearer token; this one has expired")
            return True
        return False

    async with SessionHost(store, script(), tools=[refund]) as host:
        app = ag_ui_app(host, authenticate=token)
        async with client(app) as http:
            refused = await http.post("/", json=START)
            assert (refused.status_code, refused.json()["code"]) == (401, "unauthorized")
            assert refused.json()["message"].startswith("expected credentials the server's authentication accepts")
            expired = await http.post("/", json=START, headers={"authorization": "Bearer old"})
            assert (expired.status_code, expired.json()["message"]) == (
                401,
                "expected a valid bearer token; this one has expired",
            )
            assert store.sessions() == []
            accepted = events(await http.post("/", json=START, headers={"authorization": "Bearer s3cret"}))
            assert accepted[0]["type"] == "RUN_STARTED"


async def test_a_store_without_an_agent_takes_answers_for_the_worker_that_runs_it() -> None:
    store = MemoryStore()
    model = ScriptedModel([call_tools(("refund", {"order": 7})), say("Not refunded, as you said.")])
    shared = SharedStore(store)
    async with open_session(shared, "t1", model, tools=[refund]) as worker, follow_store(shared, worker, 0.01):
        worker.send("refund 7")
        await worker.turn_done()
        async with client(ag_ui_app(StoredSessions(store))) as http:
            refused = await http.post("/", json={**START, "threadId": "t2"})
            assert refused.status_code == 404
            assert "this server runs no agent to start one" in refused.json()["message"]
            deny = {"interruptId": "call-1", "status": "resolved", "payload": {"approved": False, "reason": "no"}}
            got = events(await http.post("/", json={**START, "runId": "r3", "resume": [deny]}))
    assert [e["type"] for e in got][:3] == ["RUN_STARTED", "STATE_SNAPSHOT", "TOOL_CALL_RESULT"]
    assert got[2]["content"] == "denied by the user: no"
    assert got[-1]["type"] == "RUN_FINISHED" and got[-1]["outcome"]["type"] == "success"


async def test_the_viewer_of_agent_core_ui_speaks_ag_ui_at_its_side() -> None:
    store = MemoryStore()
    async with finished(store):
        pass
    app = create_app(store)
    mount_ag_ui(app, store)
    async with client(app) as http:
        got = events(await http.get("/ag-ui/threads/t1/events", params={"run": "run-2"}))
        assert got == ag_ui_events(store, "t1")[: len(got)]
        assert (await http.get("/api/sessions")).status_code == 200  # the viewer's own routes are untouched
