"""Pages of a session (``session_view`` and the API's ``?after=``/``?before=``): one after another they are the
whole session, whatever their size; following a session gets only what is new; a page far back folds from the
nearest kept state, not from the first record."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from effects import EventStore, MemoryStore, SharedStore, StoredInput, conversation, create_app, session_view, timeline

from ._generated import INPUTS_PER_TURN, turns, write_session

SESSION = "long"
CHECKPOINT_EVERY = 2000  # effects/_ui/_cursor.py


class Counting(SharedStore):
    """Counts the records read from the store."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.records = 0

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        for record in super().read(session_id, start, stop):
            self.records += 1
            yield record


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    """A session of 61 turns (550 records) whose last turn waits in the middle, a tool call running."""
    memory = MemoryStore()
    journal = write_session(memory, SESSION, 60)
    journal.append(list(turns(60, 1))[:5])
    return memory


def whole(store: EventStore) -> dict[str, Any]:
    """What the pages must add up to: the timeline and the conversation of one fold of the whole log (as JSON)."""
    both = {"records": timeline(store, SESSION), "conversation": conversation(store, SESSION)}
    answer: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(both))
    return answer


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limits=st.lists(st.integers(1, 200), min_size=1, max_size=8))
def test_pages_after_one_another_are_the_whole_session(store: MemoryStore, limits: list[int]) -> None:
    client = TestClient(create_app(store), base_url="http://127.0.0.1")
    records: list[Any] = []
    entries: list[Any] = []
    lanes: dict[str, Any] = {}
    page: dict[str, Any] = {"to": 0}
    for k in range(10_000):
        page = client.get(f"/api/sessions/{SESSION}?after={page['to']}&limit={limits[k % len(limits)]}").json()
        records += page["records"]
        entries += page["conversation"]
        lanes |= {lane["key"]: lane for lane in page["lanes"]}
        if page["to"] == page["session"]["length"]:
            break
    assert {"records": records, "conversation": entries} == whole(store)
    assert len(lanes) == 4 * 60 + 1 and all(lane["end_seq"] for lane in lanes.values())  # each ended once
    assert [lane["key"] for lane in page["open"]] == ["turn:61", "call-tool:c60"]
    assert page["phase"] == "acting"
    assert (page["from"], page["to"]) == (551, 550) or page["records"]  # nothing new, or the last records


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 200))
def test_pages_before_one_another_are_the_whole_session(store: MemoryStore, limit: int) -> None:
    page = session_view(store, SESSION, limit=limit)
    records, entries, keys = page["records"], page["conversation"], {lane["key"] for lane in page["lanes"]}
    while page["from"] > 1:
        page = session_view(store, SESSION, before=page["from"], limit=limit)  # a fold of its own each time
        records = page["records"] + records
        entries = page["conversation"] + entries
        keys |= {lane["key"] for lane in page["lanes"]}
    assert msgspec.json.decode(msgspec.json.encode({"records": records, "conversation": entries})) == whole(store)
    assert len(keys) == 4 * 60 + 1


def test_following_gets_only_the_new_records() -> None:
    memory = MemoryStore()
    journal = write_session(memory, SESSION, 3)
    client = TestClient(create_app(memory), base_url="http://127.0.0.1")
    first = client.get(f"/api/sessions/{SESSION}").json()
    assert (first["from"], first["to"], first["phase"]) == (1, 28, "idle")
    nothing = client.get(f"/api/sessions/{SESSION}?after=28").json()
    assert (nothing["from"], nothing["to"], nothing["records"], nothing["lanes"]) == (29, 28, [], [])
    new = list(turns(3, 1))
    journal.append(new[:4])
    page = client.get(f"/api/sessions/{SESSION}?after=28").json()
    assert [r["seq"] for r in page["records"]] == [29, 30, 31, 32] and page["phase"] == "acting"
    assert [lane["key"] for lane in page["lanes"]] == ["call-llm:4:0:0"]
    assert [lane["key"] for lane in page["open"]] == ["turn:4", "call-tool:c3"]
    journal.append(new[4:])
    page = client.get(f"/api/sessions/{SESSION}?after=32").json()
    assert [r["seq"] for r in page["records"]] == [33, 34, 35, 36, 37] and page["phase"] == "idle"
    assert [lane["key"] for lane in page["lanes"]] == ["call-tool:c3", "call-llm:4:1:0", "turn:4"]
    assert page["open"] == []
    assert [e["title"] for e in page["conversation"]][-2:] == ["assistant", "turn 4 completed"]


def test_a_page_far_back_folds_from_the_nearest_kept_state() -> None:
    memory = MemoryStore()
    write_session(memory, SESSION, 6000 // INPUTS_PER_TURN)  # 6,001 records; the newest snapshot near the end
    counting = Counting(memory)
    client = TestClient(create_app(counting), base_url="http://127.0.0.1")
    assert client.get(f"/api/sessions/{SESSION}?before=5000").json()["from"] == 4800
    assert counting.records > 4000  # the first look folds from the first record, keeping a state every 2,000
    counting.records = 0
    client.get(f"/api/sessions/{SESSION}/records/4900")  # folded by that look: no fold now
    assert counting.records == 1
    for before, detail in ((3000, 2500), (4600, 4321), (1500, 700)):
        counting.records = 0
        assert client.get(f"/api/sessions/{SESSION}?before={before}").json()["to"] == before - 1
        assert client.get(f"/api/sessions/{SESSION}/records/{detail}").json()["seq"] == detail
        assert counting.records <= 2 * (CHECKPOINT_EVERY + 200)


def test_a_record_near_a_followed_page_needs_no_fold() -> None:
    memory = MemoryStore()
    write_session(memory, SESSION, 600 // INPUTS_PER_TURN)
    counting = Counting(memory)
    client = TestClient(create_app(counting), base_url="http://127.0.0.1")
    client.get(f"/api/sessions/{SESSION}")
    counting.records = 0
    for seq in (595, 460, 402):
        assert client.get(f"/api/sessions/{SESSION}/records/{seq}").json()["seq"] == seq
    assert counting.records == 3  # only the record itself, each time


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("?after=x", "expected ?after=N once, N a whole number; got 'x'"),
        ("?after=-1", "expected ?after=N once, N a whole number; got '-1'"),
        ("?after=1&after=2", "expected ?after=N once, N a whole number; got 'after=1&after=2'"),
        ("?after=1e3", "expected ?after=N once, N a whole number; got '1e3'"),
        ("?after=" + "9" * 19, "expected ?after=N once, N a whole number; got '" + "9" * 19 + "'"),
        ("?after=29", "session 'long' has records 1 to 28; got after=29"),
        ("?before=0", "session 'long' has records 1 to 28; got before=0"),
        ("?before=30", "session 'long' has records 1 to 28; got before=30"),
        ("?after=1&before=3", "ask for the records after a record or before one, not both"),
        ("?limit=0", "a page holds 1 to 200 records; got limit=0"),
        ("?limit=201", "a page holds 1 to 200 records; got limit=201"),
        ("/records/3?bytes=100", "a record's detail takes 16384 to 4194304 bytes; got 100"),
        ("/records/3?bytes=99999999", "a record's detail takes 16384 to 4194304 bytes; got 99999999"),
    ],
)
def test_a_page_asked_for_wrongly_says_what_was_expected(query: str, error: str) -> None:
    memory = MemoryStore()
    write_session(memory, SESSION, 3)
    client = TestClient(create_app(memory), base_url="http://127.0.0.1")
    answer = client.get(f"/api/sessions/{SESSION}{query}")
    assert (answer.status_code, answer.json()) == (400, {"error": error})


def test_the_session_list_comes_in_pages() -> None:
    memory = MemoryStore()
    for k in range(130):
        write_session(memory, f"s{k:03}", 1)
    client = TestClient(create_app(memory), base_url="http://127.0.0.1")
    first = client.get("/api/sessions").json()
    assert (len(first["sessions"]), first["offset"], first["total"]) == (100, 0, 130)
    rest = client.get("/api/sessions?offset=100").json()
    assert [s["session_id"] for s in rest["sessions"]] == [f"s{k:03}" for k in range(100, 130)]
    assert {s["phase"] for s in first["sessions"] + rest["sessions"]} == {"idle"}
    assert client.get("/api/sessions?offset=500").json()["sessions"] == []
    assert client.get("/api/sessions?limit=101").json() == {"error": "a page lists 1 to 100 sessions; got limit=101"}
