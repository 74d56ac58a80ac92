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
    with TestClient(create_app(store), base_url="http://127.0.0.1:8765") as client:
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
    json_body = {"content-type": "application/json"}
    assert client.post(f"/api/sessions/{SESSION}/decisions", content=b"{", headers=json_body).json() == {
        "error": 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}; Input data was truncated'
    }
    assert client.post(f"/api/sessions/{SESSION}/fork", json={"at": 99}).status_code == 400
    assert client.get("/assets/secret.txt").status_code == 404
    assert client.get(f"/api/sessions/{SESSION}/records/0").status_code == 400


def test_the_page_and_its_assets_are_served_from_the_package(waiting: tuple[MemoryStore, TestClient]) -> None:
    _, client = waiting
    page = client.get("/")
    assert page.headers["content-type"].startswith("text/html") and "/assets/app.js" in page.text
    assert client.get("/assets/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/api/sessions").json()["sessions"][0]["phase"] == "awaiting-approval"
    assert client.post(f"/api/sessions/{SESSION}/fork", json={"at": 10}).json() == {"session_id": f"{SESSION}@10"}


def test_another_sites_page_cannot_decide_or_fork(waiting: tuple[MemoryStore, TestClient]) -> None:
    """A page of any site can POST to a loopback port; only the viewer's own JSON requests are taken."""
    store, client = waiting
    decision = f"/api/sessions/{SESSION}/decisions"
    simple = client.post(
        decision, content=b'{"tool_call_id": "c3", "approve": true}', headers={"content-type": "text/plain"}
    )
    assert simple.status_code == 403 and simple.json() == {
        "error": "expected a JSON body (Content-Type: application/json)"
    }
    foreign = client.post(
        decision, json={"tool_call_id": "c3", "approve": True}, headers={"origin": "https://evil.example"}
    )
    assert foreign.status_code == 403 and "Origin 'https://evil.example'" in foreign.json()["error"]
    rebound = client.post(decision, json={"tool_call_id": "c3", "approve": True}, headers={"host": "evil.example:8765"})
    assert rebound.status_code == 403 and "Host 'evil.example:8765'" in rebound.json()["error"]
    fork = client.post(f"/api/sessions/{SESSION}/fork", content=b'{"at": 10}', headers={"content-type": "text/plain"})
    assert fork.status_code == 403
    assert store.session(SESSION).length == 10 and [s.session_id for s in store.sessions()] == [SESSION]
