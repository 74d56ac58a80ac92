"""Fuzzing the JSON-lines import: a hostile log is refused with a DecodeError before anything is written, or
imported as a session that every reader (listing, loading, export) handles."""

from __future__ import annotations

from hypothesis import given

from agent_core import DecodeError
from effects import MemoryStore, export_session, import_session, load_state

from ._bytes import fuzz, hostile_log


@fuzz
@given(hostile_log())
def test_a_hostile_log_is_refused_or_imported_whole(data: bytes) -> None:
    store = MemoryStore()
    try:
        info = import_session(store, data, source="fuzz.jsonl")
    except DecodeError as error:
        assert str(error).startswith("fuzz.jsonl: ")
        assert store.sessions() == []  # nothing was written
        return
    [listed] = store.sessions()
    assert listed.session_id == info.session_id
    load_state(store, info.session_id)
    export_session(store, info.session_id)
