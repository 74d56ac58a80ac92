"""How a SQLite store keeps a record's bytes: deflated against the frozen dictionary, the same whatever came before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_core import encode_input
from effects import SessionJournal, SqliteStore

from .conftest import session


def _rows(path: Path, name: str) -> list[tuple[int, int, bytes]]:
    """``(seq, codec, stored bytes)`` of each record of session ``name``, read behind the store's back."""
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT seq, codec, CAST(data AS BLOB) FROM inputs JOIN sessions ON sessions.id = inputs.session "
            "WHERE sessions.name = ? ORDER BY seq",
            (name,),
        ).fetchall()


def _write(path: Path, *sessions: tuple[str, int]) -> None:
    """Each ``(name, turns)`` session in order, one record per commit: each is packed after the one before."""
    store = SqliteStore(path)
    try:
        for name, turns in sessions:
            journal = SessionJournal(store, name)
            for inp in session(turns, session_id=name):
                journal.append([inp])
    finally:
        store.close()


def test_a_record_is_stored_deflated_and_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    _write(path, ("s1", 2))
    store = SqliteStore(path, readonly=True)
    try:
        read = [record.data for record in store.read("s1")]
    finally:
        store.close()
    assert read == [encode_input(inp, format="msgpack") for inp in session(2, session_id="s1")]
    rows = _rows(path, "s1")
    assert {codec for _, codec, _ in rows} == {1}  # every input of this session shrinks against the dictionary
    assert sum(len(data) for _, _, data in rows) < sum(map(len, read)) * 0.6


def test_a_record_is_stored_as_the_same_bytes_whatever_was_written_before_it(tmp_path: Path) -> None:
    _write(tmp_path / "alone.db", ("s1", 2))
    _write(tmp_path / "after.db", ("other", 5), ("s1", 2))
    alone = _rows(tmp_path / "alone.db", "s1")
    assert len(alone) == len(session(2))
    assert _rows(tmp_path / "after.db", "s1") == alone
