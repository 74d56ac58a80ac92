"""JSON-lines export and import: the portable format, upcasting older logs, and refusing bad files untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core import DecodeError, decode_log, encode_log, replay, state_hash
from effects import (
    EventStore,
    SessionExists,
    SessionJournal,
    export_session,
    import_session,
    load_state,
    replay_session,
)

from .conftest import session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_export_then_import_gives_the_same_log(store: EventStore) -> None:
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs)
    exported = export_session(store, "s1")
    assert exported == encode_log(inputs)
    info = import_session(store, exported, session_id="copy")
    assert info.length == len(inputs) and info.head == store.session("s1").head
    assert list(store.read("copy")) == list(store.read("s1"))


def test_export_stops_where_asked(store: EventStore) -> None:
    SessionJournal(store, "s1").append(session(1))
    assert decode_log(export_session(store, "s1", until=3)) == session(1)[:3]


def test_the_golden_log_imports_and_replays_to_its_recorded_hash(store: EventStore) -> None:
    data = (FIXTURES / "golden-v1.jsonl").read_bytes()
    info = import_session(store, data, source="golden-v1.jsonl")
    assert replay_session(store, info.session_id).state_hash == (FIXTURES / "golden-v1.hash").read_text().strip()


def test_an_origin_log_keeps_its_schema_version_per_row_and_replays_upcast(store: EventStore) -> None:
    data = (FIXTURES / "origin-v0.jsonl").read_bytes()
    info = import_session(store, data)
    assert {record.schema_version for record in store.read(info.session_id)} == {0}
    expected = (FIXTURES / "origin-v0.hash").read_text().strip()
    assert replay_session(store, info.session_id).state_hash == expected
    assert state_hash(load_state(store, info.session_id)) == expected
    assert export_session(store, info.session_id) == encode_log(decode_log(data))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the log is empty; expected a session-started record first"),
        (
            b'{"type":"user-message-received","timestamp":1,"message_id":"m","content":"hi"}\n',
            "record 1: a log must start with a session-started record, got 'user-message-received'",
        ),
        (
            b'{"type":"session-started","timestamp":1,"session_id":"s","schema_version":7}\n',
            "schema version 7 is newer than this release reads (1); upgrade agent-core",
        ),
        (b"not json at all\n", "record 1: JSON is malformed"),
    ],
    ids=["empty", "no-session-started", "newer-schema", "not-json"],
)
def test_bad_files_are_refused_with_the_line_and_nothing_is_written(
    store: EventStore, content: bytes, message: str
) -> None:
    with pytest.raises(DecodeError) as raised:
        import_session(store, content, source="bad.jsonl")
    assert str(raised.value).startswith("bad.jsonl: ")
    assert message in str(raised.value)
    assert store.sessions() == []


def test_a_truncated_file_names_its_last_line(store: EventStore) -> None:
    data = encode_log(session(1))
    with pytest.raises(DecodeError) as raised:
        import_session(store, data[:-25], source="cut.jsonl")
    assert raised.value.record == len(session(1))
    assert store.sessions() == []


def test_a_log_the_reducer_refuses_is_not_imported(store: EventStore) -> None:
    inputs = session(1)
    data = encode_log([inputs[0], *inputs[2:]])  # the user message is missing
    with pytest.raises(DecodeError) as raised:
        import_session(store, data, source="gap.jsonl")
    assert str(raised.value).startswith("gap.jsonl: record 2: the reducer refuses this input: re-act-observed is not")
    assert store.sessions() == []


def test_importing_over_an_existing_session_is_refused(store: EventStore) -> None:
    data = encode_log(session(1))
    import_session(store, data)
    with pytest.raises(SessionExists, match="session 's1' already exists"):
        import_session(store, data)
    assert import_session(store, data, session_id="s2").length == len(session(1))
    assert load_state(store, "s2") == replay(session(1))
