"""The viewer's JSON API through Starlette's test client: decisions, fork, and errors a person can cause."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from agent_core import tag_of
from effects import MemoryStore, create_app

from ._session import SESSION, recorded


@pytest.fixture
def waiting() -> Iterator[tuple[MemoryStore, TestClient]]:
    """A store whose session waits for a decision on ``c3``, and a client of the viewer over it."""
    store = MemoryStore()
    recorded(store, approve=False)
    with TestClient(create_app(store)) as client:
        yield store, client


def test_deny_writes_the_decision_into_the_log(waiting: tuple[MemoryStore, TestClient]) -> None:
    store, client = waiting
    assert client.get(f"/api/sessions/{SESSION}").json()["approvals"][0]["tool_call_id"] == "c3"
    answer = client.post(
        f"/api/sessions/{SESSION}/decisions", json={"tool_call_id": "c3", "approve": False, "reason": "no"}
    )
    assert answer.status_code == 200 and answer.json() == {"seq": 11}
    [last] = list(store.read(SESSION, 11))
    assert tag_of(last.decode()) == "tool-call-denied"
    again = client.post(f"/api/sessions/{SESSION}/decisions", json={"tool_call_id": "c3", "approve": True})
    assert again.status_code == 409 and "c3" in again.json()["error"]


def test_mistakes_get_a_status_and_a_message(waiting: tuple[MemoryStore, TestClient]) -> None:
    _, client = waiting
    assert client.get("/api/sessions/nope").status_code == 404
    assert client.post(f"/api/sessions/{SESSION}/decisions", content=b"{").json() == {
        "error": 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}'
    }
    assert client.post(f"/api/sessions/{SESSION}/fork", json={"at": 99}).status_code == 400
    assert client.get("/assets/secret.txt").status_code == 404
    assert client.get(f"/api/sessions/{SESSION}/records/0").status_code == 400


def test_the_page_and_its_assets_are_served_from_the_package(waiting: tuple[MemoryStore, TestClient]) -> None:
    _, client = waiting
    page = client.get("/")
    assert page.headers["content-type"].startswith("text/html") and "/assets/app.js" in page.text
    assert client.get("/assets/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/api/sessions").json()[0]["phase"] == "awaiting-approval"
    assert client.post(f"/api/sessions/{SESSION}/fork", json={"at": 10}).json() == {"session_id": f"{SESSION}@10"}
