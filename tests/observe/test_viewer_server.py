"""The viewer as a user starts it (``agent-core ui``, a real uvicorn in its own process), asked what a hostile
page or a careless client would ask: every refusal is a 4xx with a JSON message, and the terminal shows no
traceback."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agent_core import (
    AgentConfig,
    AgentInput,
    ContinueReAct,
    ReActObserved,
    SessionStarted,
    ToolCallRequest,
    ToolDefinition,
    Usage,
    UserMessageReceived,
)
from effects import SessionJournal, SqliteStore, fork_session
from effects.cli import main

from ._session import SESSION, START, recorded

pytestmark = pytest.mark.slow  # each server is a process of its own

DECISION = f"/api/sessions/{SESSION}/decisions"
FORK = f"/api/sessions/{SESSION}/fork"
EXPECTED_DECISION = 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}'


class Viewer(NamedTuple):
    host: str
    port: int
    db: Path
    process: subprocess.Popen[str]

    def ask(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """The status and decoded JSON body of one request (``application/json`` unless ``headers`` say)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = {"content-type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers={**sent, **(headers or {})})
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        return answer.status, json.loads(data) if answer.headers.get_content_type() == "application/json" else data

    def length(self, session_id: str = SESSION) -> int:
        store = SqliteStore(self.db, readonly=True)
        try:
            return store.session(session_id).length
        finally:
            store.close()


def serve(db: Path, *extra: str) -> Viewer:
    """``agent-core ui DB --port 0 ...`` in a process; returns once it printed where it listens."""
    process = subprocess.Popen(
        [sys.executable, "-m", "effects", "ui", str(db), "--port", "0", *extra],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    where = re.search(r"on http://\[?([^\]/]+?)\]?:(\d+)/", line)
    assert where is not None, line + process.stderr.read()
    return Viewer(where[1], int(where[2]), db, process)


def stopped(viewer: Viewer) -> str:
    """Stop the server as Ctrl-C does; returns everything it wrote to the terminal after its first line."""
    viewer.process.send_signal(signal.SIGINT)
    _, err = viewer.process.communicate(timeout=30)
    return err


DEEP = "[" * 100_000 + "]" * 100_000


def deep_arguments(session_id: str) -> list[AgentInput]:
    call = ToolCallRequest(name="lookup", parameters=DEEP)
    return [
        SessionStarted(
            timestamp=START, session_id=session_id, config=AgentConfig(), tools=(ToolDefinition(name="lookup"),)
        ),
        UserMessageReceived(timestamp=START + 1, message_id="u1", content="go"),
        ReActObserved(
            timestamp=START + 2,
            called_llm_at=START + 1,
            observation=ContinueReAct(tool_calls={"c1": call}),
            usage=Usage(input_tokens=1, output_tokens=1),
        ),
    ]


def damage(db: Path, session_id: str, seq: int) -> None:
    """Overwrite one stored record's bytes (and drop the snapshots that would skip reading it)."""
    connection = sqlite3.connect(db)
    with connection:
        [(number,)] = connection.execute("SELECT id FROM sessions WHERE name = ?", (session_id,))
        connection.execute("UPDATE inputs SET data = x'00ff' WHERE session = ? AND seq = ?", (number, seq))
        connection.execute("DELETE FROM snapshots WHERE session = ?", (number,))
    connection.close()


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    """A server over a store holding the known session waiting for a decision on ``c3``, a fork of it named
    ``a/b``, a damaged session, and a session whose model asked for a call with arguments nested 100,000 deep."""
    db = tmp_path_factory.mktemp("viewer") / "log.db"
    store = SqliteStore(db, synchronous="NORMAL")
    recorded(store, approve=False)
    fork_session(store, SESSION, 5, new_id="a/b")
    recorded(store, "broken")
    SessionJournal(store, "deep").append(deep_arguments("deep"))
    store.close()
    damage(db, "broken", 3)
    server = serve(db)
    try:
        yield server
    finally:
        terminal = stopped(server)
        assert "Traceback" not in terminal and "ERROR" not in terminal, terminal
        assert terminal.strip() in ("", "agent-core ui: interrupted"), terminal


ROUTES = [
    ("GET", "/"),
    ("GET", "/assets/app.js"),
    ("GET", "/api/sessions"),
    ("GET", f"/api/sessions/{SESSION}"),
    ("GET", f"/api/sessions/{SESSION}/head"),
    ("GET", f"/api/sessions/{SESSION}/records/3"),
    ("GET", f"/api/sessions/{SESSION}/verify"),
    ("POST", DECISION),
    ("POST", FORK),
]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "", "10.0.0.1"])
def test_a_rebound_name_reads_nothing(viewer: Viewer, host: str) -> None:
    """A page on a name that resolves to 127.0.0.1 is same-origin with the viewer: only its Host tells."""
    for method, path in ROUTES:
        body = b'{"tool_call_id": "c3", "approve": true}' if path == DECISION else b'{"at": 3}'
        status, answer = viewer.ask(method, path, body if method == "POST" else None, headers={"host": host})
        assert status == 403, (method, path)
        assert answer == {
            "error": f"expected a request to a loopback address (127.0.0.1, [::1], localhost), got Host {host!r}"
        }
    assert viewer.length() == 10


def test_loopback_names_are_answered(viewer: Viewer) -> None:
    for host in (f"127.0.0.1:{viewer.port}", "localhost", f"LOCALHOST:{viewer.port}", "[::1]:80", "127.0.0.2"):
        status, answer = viewer.ask("GET", f"/api/sessions/{SESSION}/head", headers={"host": host})
        assert (status, answer) == (200, {"length": 10}), host


@pytest.mark.parametrize("approve", ['"false"', '"no"', "[false]", "0", "1", "null", '{"v": false}'])
def test_a_decision_takes_only_a_json_boolean(viewer: Viewer, approve: str) -> None:
    body = f'{{"tool_call_id": "c3", "approve": {approve}}}'.encode()
    status, answer = viewer.ask("POST", DECISION, body)
    got = {'"': "str", "[": "array", "0": "int", "1": "int", "n": "null", "{": "object"}[approve[0]]
    assert (status, answer) == (400, {"error": f"{EXPECTED_DECISION}; Expected `bool`, got `{got}` - at `$.approve`"})
    assert viewer.length() == 10


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'{"tool_call_id": "c3"}', "Object missing required field `approve`"),
        (b'{"tool_call_id": 3, "approve": false}', "Expected `str`, got `int` - at `$.tool_call_id`"),
        (b'{"tool_call_id": "c3", "approve": false, "reason": ["x"]}', "Expected `str`, got `array` - at `$.reason`"),
        (b'{"tool_call_id": "c3", "approve": false, "force": true}', "Object contains unknown field `force`"),
        (b"[]", "Expected `object`, got `array`"),
        (b"{", "Input data was truncated"),
        (b'{"tool_call_id": "\xff", "approve": false}', "the body is not UTF-8"),
        (b'{"tool_call_id": "c3", "approve": false, "reason": "\\udcff"}', "JSON is malformed: invalid utf-16"),
        (b"[" * 30_000 + b"]" * 30_000, "Expected `object`, got `array`"),
        (b'{"extra": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", "Object contains unknown field `extra`"),
    ],
)
def test_a_malformed_decision_says_what_was_expected(viewer: Viewer, body: bytes, problem: str) -> None:
    status, answer = viewer.ask("POST", DECISION, body)
    assert status == 400 and answer["error"].startswith(f"{EXPECTED_DECISION}; {problem}"), answer
    assert viewer.length() == 10


def test_a_body_too_large_or_nested_100000_deep_is_refused_unread(viewer: Viewer) -> None:
    for body in (
        b"[" * 100_000 + b"]" * 100_000,
        b'{"tool_call_id": "c3", "approve": false, "reason": "%s"}' % (b"x" * 70_000),
    ):
        status, answer = viewer.ask("POST", DECISION, body)
        assert status == 413 and answer["error"].startswith("the body is longer than 65536 bytes; expected {"), answer
    assert viewer.length() == 10


@pytest.mark.parametrize(("at", "got"), [("true", "bool"), ('"3"', "str"), ("3.0", "float"), ("null", "null")])
def test_a_fork_takes_only_a_json_integer(viewer: Viewer, at: str, got: str) -> None:
    status, answer = viewer.ask("POST", FORK, f'{{"at": {at}}}'.encode())
    expected = f'expected {{"at": N}}, the last record to copy; Expected `int`, got `{got}` - at `$.at`'
    assert (status, answer) == (400, {"error": expected})
    status, listed = viewer.ask("GET", "/api/sessions")
    assert [s["session_id"] for s in listed["sessions"]] == [SESSION, "a/b", "broken", "deep"]


def test_a_session_id_holding_a_slash_is_one_session(viewer: Viewer) -> None:
    status, view = viewer.ask("GET", "/api/sessions/a%2Fb")
    assert status == 200 and view["session"]["session_id"] == "a/b" and len(view["records"]) == 5
    assert viewer.ask("GET", "/api/sessions/a%2Fb/head") == (200, {"length": 5})
    assert viewer.ask("GET", "/api/sessions/a%2Fb/records/5")[1]["seq"] == 5
    assert viewer.ask("GET", "/api/sessions/a%2Fb/verify")[1]["ok"] is True
    status, answer = viewer.ask("GET", "/api/sessions/a/b")  # unescaped, it is two segments
    assert status == 404 and answer["error"].startswith("Not Found: GET /api/sessions/a/b; the viewer serves")


def test_a_damaged_session_is_said_not_crashed_on(viewer: Viewer) -> None:
    damaged = (
        "session 'broken', record 3: its bytes do not match its hash (changed, or copied from elsewhere); the log "
        "is damaged from here on (restore it from a backup or an export, or fork the session before this record)"
    )
    assert viewer.ask("GET", "/api/sessions/broken") == (422, {"error": damaged})
    assert viewer.ask("GET", "/api/sessions/broken/records/4") == (422, {"error": damaged})
    assert viewer.ask("GET", "/api/sessions/broken/verify")[1] == {"ok": False, "divergence": None, "message": damaged}
    status, listed = viewer.ask("GET", "/api/sessions")
    sessions = listed["sessions"]
    assert status == 200 and sessions[2] | {"head": ""} == {
        "session_id": "broken",
        "length": 16,
        "head": "",
        "first_timestamp": sessions[2]["first_timestamp"],
        "last_timestamp": sessions[2]["last_timestamp"],
        "parent": None,
        "phase": "unreadable",
        "error": damaged,
    }


def test_a_session_with_arguments_nested_100000_deep_is_shown(viewer: Viewer) -> None:
    status, page = viewer.ask("GET", "/api/sessions/deep")
    assert status == 200 and page["phase"] == "acting"
    assert [e["text"][:3] for e in page["conversation"] if e["kind"] == "tool-call"] == ["[[["]
    status, detail = viewer.ask("GET", "/api/sessions/deep/records/3")
    assert status == 200 and detail["seq"] == 3 and detail["cut"] is True  # 200 KB of brackets, three times
    assert viewer.ask("GET", "/api/sessions/deep/verify")[1]["ok"] is True


def test_a_page_asked_for_wrongly_is_a_400_in_json(viewer: Viewer) -> None:
    assert viewer.ask("GET", f"/api/sessions/{SESSION}?after=x&limit=3") == (
        400,
        {"error": "expected ?after=N once, N a whole number; got 'x'"},
    )
    assert viewer.ask("GET", "/api/sessions?offset=-1")[0] == 400
    assert viewer.ask("GET", f"/api/sessions/{SESSION}/records/3?bytes=%ff")[0] == 400


def test_the_tree_of_a_session_alone_is_itself_and_of_an_unknown_one_a_404(viewer: Viewer) -> None:
    status, tree = viewer.ask("GET", f"/api/sessions/{SESSION}/tree")
    assert status == 200 and (tree["session_id"], tree["children"], tree["left_off"]) == (SESSION, [], 0)
    status, refused = viewer.ask("GET", "/api/sessions/nope/tree")
    assert status == 404 and refused["error"].startswith("no session 'nope' in the store")


def test_what_the_viewer_does_not_serve_is_said_in_json(viewer: Viewer) -> None:
    routes = "/, /assets/NAME, /api/sessions[/ID[/head|/records/N|/tree|/verify|/decisions|/fork]]"
    assert viewer.ask("GET", "/api/nothing") == (
        404,
        {"error": f"Not Found: GET /api/nothing; the viewer serves {routes}"},
    )
    assert viewer.ask("DELETE", f"/api/sessions/{SESSION}") == (
        405,
        {"error": f"Method Not Allowed: DELETE /api/sessions/{SESSION}; the viewer serves {routes}"},
    )
    assert viewer.ask("GET", f"/api/sessions/{SESSION}/records/{10**30}")[0] == 400
    assert viewer.ask("GET", "/api/sessions/nope%00x")[0] == 404


def test_a_json_false_denies_and_a_second_decision_conflicts(viewer: Viewer) -> None:
    assert viewer.ask("POST", DECISION, b'{"tool_call_id": "c3", "approve": false, "reason": "no"}') == (
        200,
        {"seq": 11},
    )
    status, answer = viewer.ask("POST", DECISION, b'{"tool_call_id": "c3", "approve": true}')
    assert status == 409 and "c3" in answer["error"]


def test_a_viewer_on_another_loopback_address_takes_its_own_pages_decisions(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    store = SqliteStore(db, synchronous="NORMAL")
    recorded(store, approve=False)
    store.close()
    viewer = serve(db, "--host", "127.0.0.2")
    try:
        assert viewer.host == "127.0.0.2"
        own = {"origin": f"http://127.0.0.2:{viewer.port}", "host": f"127.0.0.2:{viewer.port}"}
        assert viewer.ask("GET", "/", headers=own)[0] == 200
        assert viewer.ask("POST", DECISION, b'{"tool_call_id": "c3", "approve": true}', headers=own) == (
            200,
            {"seq": 11},
        )
        foreign = {"origin": "http://evil.example", "host": f"127.0.0.2:{viewer.port}"}
        assert viewer.ask("POST", FORK, b'{"at": 3}', headers=foreign)[0] == 403
    finally:
        terminal = stopped(viewer)
    assert "Traceback" not in terminal, terminal


def test_a_port_out_of_range_or_busy_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SqliteStore(tmp_path / "log.db").close()
    assert main(["ui", str(tmp_path / "log.db"), "--port", "99999"]) == 2
    assert capsys.readouterr().err == (
        "agent-core ui: --port expects a port number from 0 to 65535 (0 picks a free one), got 99999\n"
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["ui", str(tmp_path / "log.db"), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (
        f"agent-core ui: port {port} on 127.0.0.1 is in use (another viewer or program listens there); "
        "choose another with --port N, or --port 0 for a free one\n"
    )
