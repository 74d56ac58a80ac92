"""Everything the viewer sends is bounded, whatever the session holds: megabytes of text, a turn of hundreds of
tool calls, arguments nested 100,000 deep; and the data embedded in a page cannot end its script element."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from agent_core import (
    AgentConfig,
    AgentInput,
    ContinueReAct,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallRequest,
    ToolCallStarted,
    ToolDefinition,
    ToolSuccess,
    Usage,
    UserMessageReceived,
)
from effects import (
    MemoryStore,
    SessionInfo,
    SessionJournal,
    SqliteStore,
    create_app,
    record_view,
    render_html,
    session_view,
    write_html,
)
from effects.cli import main

from ._generated import INPUTS_PER_TURN, write_session
from ._session import START

KIB = 1024
MIB = 1024 * KIB
PAGE_BOUND = MIB + 64 * KIB + 256 * KIB + 4 * KIB  # records, the last record, the state it ends in, the session
DEEP = "[" * 100_000 + "]" * 100_000

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=300) | st.sampled_from(
    ["<!--<script>", "</script>", "\u2028\u2029", "&amp;<>", "a" * 100_000]
)


def one_message(text: str) -> MemoryStore:
    store = MemoryStore()
    SessionJournal(store, "s").append(
        [
            SessionStarted(timestamp=START, session_id="s", config=AgentConfig(system_prompt=text)),
            UserMessageReceived(timestamp=START + 1, message_id="u1", content=text * 3),
        ]
    )
    return store


@given(texts, st.integers(16 * KIB, 64 * KIB))
def test_a_record_fits_the_bytes_asked_and_is_whole_when_it_fits(text: str, budget: int) -> None:
    store = one_message(text)
    detail = record_view(store, "s", 2, budget=budget)
    assert len(msgspec.json.encode(detail)) <= budget + 64  # and the "bytes" and "cut" it adds
    whole = record_view(store, "s", 2, budget=4 * MIB)
    assert detail["cut"] == (whole["bytes"] > budget)
    if not detail["cut"]:
        assert detail == whole and detail["input"]["content"] == text * 3


@given(texts)
def test_the_data_in_a_page_holds_nothing_that_ends_a_script_and_means_the_same(text: str) -> None:
    page = render_html(one_message(text), "s").encode()
    data = page.split(b'id="agent-core-data">', 1)[1].split(b"</script>", 1)[0]
    assert not any(c in data for c in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()))
    embedded = msgspec.json.decode(data)
    assert embedded["records"][1]["detail"]["input"]["content"] == text * 3 or len(text) > 10_000


def huge_session(session_id: str) -> list[AgentInput]:
    """A 3 MB question, a turn of 300 tool calls with 2 MB arguments among them, a result nested 100,000 deep."""
    usage = Usage(input_tokens=1, output_tokens=1)
    calls = {f"c{k}": ToolCallRequest(name="lookup", parameters=f'{{"q": "{k}"}}') for k in range(300)}
    calls["big"] = ToolCallRequest(name="lookup", parameters='{"q": "' + "x" * 2 * MIB + '"}')
    calls["deep"] = ToolCallRequest(name="lookup", parameters=DEEP)
    tool = ToolDefinition(name="lookup", description="d" * MIB)
    return [
        SessionStarted(timestamp=START, session_id=session_id, config=AgentConfig(), tools=(tool,)),
        UserMessageReceived(timestamp=START + 1, message_id="u1", content="q" * 3 * MIB),
        ReActObserved(
            timestamp=START + 2, called_llm_at=START + 1, observation=ContinueReAct(tool_calls=calls), usage=usage
        ),
        *[ToolCallStarted(timestamp=START + 3, tool_call_id=i) for i in calls],
        ToolCallCompleted(timestamp=START + 4, tool_call_id="big", result=ToolSuccess(content="r" * 2 * MIB)),
        ToolCallCompleted(timestamp=START + 5, tool_call_id="deep", result=ToolSuccess(content=DEEP)),
    ]


def test_long_keys_are_cut_and_the_viewers_own_objects_keep_every_key() -> None:
    """40 calls with ids of 3,000 characters: the ids (keys of the input's calls) are cut, not the state's keys."""
    calls = {f"{'c' * 3000}{k}": ToolCallRequest(name="lookup", parameters='"' + "x" * 3000 + '"') for k in range(40)}
    store = MemoryStore()
    SessionJournal(store, "s").append(
        [
            SessionStarted(
                timestamp=START, session_id="s", config=AgentConfig(), tools=(ToolDefinition(name="lookup"),)
            ),
            UserMessageReceived(timestamp=START + 1, message_id="u1", content="q"),
            ReActObserved(
                timestamp=START + 2,
                called_llm_at=START + 1,
                observation=ContinueReAct(tool_calls=calls),
                usage=Usage(input_tokens=1, output_tokens=1),
            ),
        ]
    )
    whole = record_view(store, "s", 3, budget=4 * MIB)
    detail = record_view(store, "s", 3, budget=16 * KIB)
    assert detail["cut"] and len(msgspec.json.encode(detail)) <= 16 * KIB + 64
    assert detail.keys() == whole.keys() and detail["state"].keys() == whole["state"].keys()
    shown = list(detail["input"]["observation"]["tool_calls"])
    assert len(shown) > 1 and all(k.startswith("c" * 32) and " more characters" in k for k in shown[:-1])
    assert shown[-1] == "…"
    page = session_view(store, "s", after=2, limit=1)
    assert page["records"][0].keys() == session_view(store, "s", after=1, limit=1)["records"][0].keys()


@pytest.fixture(scope="module")
def huge() -> tuple[MemoryStore, TestClient]:
    store = MemoryStore()
    SessionJournal(store, "huge").append(huge_session("huge"))
    for k in range(150):
        write_session(store, f"{'s' * 20_000}{k}", 1)  # long ids
    return store, TestClient(create_app(store), base_url="http://127.0.0.1")


@pytest.mark.slow
def test_every_page_of_a_huge_session_is_bounded(huge: tuple[MemoryStore, TestClient]) -> None:
    store, client = huge
    length = store.session("huge").length
    seen, to = 0, 0
    while to < length:
        answer = client.get(f"/api/sessions/huge?after={to}")
        assert len(answer.content) <= PAGE_BOUND
        page = answer.json()
        seen, to = seen + len(page["records"]), page["to"]
    assert seen == length
    assert len(client.get("/api/sessions/huge").content) <= PAGE_BOUND
    assert len(client.get("/api/sessions/huge?before=300").content) <= PAGE_BOUND
    question = client.get("/api/sessions/huge?after=1&limit=1").json()["conversation"]
    assert question[0]["text"].endswith(" more characters")  # cut, and saying so
    calls = client.get("/api/sessions/huge?after=2&limit=1").json()["conversation"]
    assert calls[-1].startswith("… ") and calls[-1].endswith(" more items")


@pytest.mark.parametrize("seq", [2, 3, 304, 305])
def test_every_record_of_a_huge_session_is_bounded(huge: tuple[MemoryStore, TestClient], seq: int) -> None:
    _, client = huge
    answer = client.get(f"/api/sessions/huge/records/{seq}")
    assert answer.status_code == 200 and len(answer.content) <= 256 * KIB + 64
    detail = answer.json()
    assert detail["cut"] is True and detail["bytes"] > 256 * KIB and detail["seq"] == seq
    more = client.get(f"/api/sessions/huge/records/{seq}?bytes={4 * MIB}")
    assert len(more.content) <= 4 * MIB + 64 and len(more.content) > len(answer.content)


def test_the_session_list_of_long_ids_is_bounded(huge: tuple[MemoryStore, TestClient]) -> None:
    _, client = huge
    first = client.get("/api/sessions")
    assert len(first.content) <= 2 * MIB
    listed = first.json()
    assert listed["total"] == 151 and 0 < len(listed["sessions"]) < 100  # ended early, past 1 MiB
    assert client.get(f"/api/sessions?offset={len(listed['sessions'])}").json()["sessions"]


class Listless(MemoryStore):
    """A store too big to list whole: reading every session fails the test."""

    def sessions(self) -> list[SessionInfo]:
        raise AssertionError("the whole store was listed")


def test_the_session_list_and_a_tree_read_only_what_they_show() -> None:
    store = Listless()
    for name in ("a", "b", "b:c1", "b:c1:d1", "e"):
        write_session(store, name, 1)
    with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        page = client.get("/api/sessions?offset=1&limit=2").json()
        assert ([s["session_id"] for s in page["sessions"]], page["total"]) == (["b", "b:c1"], 5)
        alone = client.get("/api/sessions/a/tree").json()  # nothing named below it: not even folded
        assert (alone["session_id"], alone["phase"], alone["children"]) == ("a", "", [])
        tree = client.get("/api/sessions/b/tree").json()  # sessions named like children, not started as ones
        assert (tree["session_id"], tree["phase"], tree["children"]) == ("b", "idle", [])


@pytest.mark.slow
def test_a_page_of_a_huge_session_is_bounded(huge: tuple[MemoryStore, TestClient], tmp_path: Path) -> None:
    store, _ = huge
    written = write_html(store, "huge", tmp_path / "huge.html")
    assert written <= 32 * MIB + 512 * KIB  # the records' data, the state they end in, the script and style
    assert written == (tmp_path / "huge.html").stat().st_size


@pytest.mark.slow
def test_inspect_html_writes_a_window_of_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "log.db"
    store = SqliteStore(db, synchronous="OFF")
    write_session(store, "long", 6000 // INPUTS_PER_TURN)  # 5,995 records
    store.close()
    page = tmp_path / "long.html"
    assert main(["inspect", str(db), "long", "--html", str(page)]) == 0
    assert capsys.readouterr().err.startswith(f"wrote the viewer of long to {page} (records 4996 to 5995 of 5995; ")
    data = msgspec.json.decode(page.read_bytes().split(b'id="agent-core-data">', 1)[1].split(b"</script>", 1)[0])
    assert [r["record"]["seq"] for r in data["records"]] == list(range(4996, 5996)) and data["verify"]["ok"]
    assert main(["inspect", str(db), "long", "--html", str(page), "--from", "10", "--at", "20"]) == 0
    assert "(records 10 to 20 of 5995; " in capsys.readouterr().err
    assert main(["inspect", str(db), "long", "--html", str(page), "--from", "1"]) == 2
    assert capsys.readouterr().err == (
        "agent-core inspect: session 'long': a page holds at most 5000 records; records 1 to 5995 are 5995 "
        "(choose fewer: from 996 to 5995, or write several pages)\n"
    )
    assert main(["inspect", str(db), "long", "--html", str(page), "--at", "7000"]) == 2
    assert "the session has records 1 to 5995; got the last record 7000" in capsys.readouterr().err
