"""A snapshot is anchored to the record it follows: the state of another history of a session is never loaded,
the mismatch is named (a warning when loading, ``replay --verify``), and a good snapshot is still used."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from agent_core import STATE_FORMAT, encode_state, replay, state_digest
from effects import (
    EventStore,
    MemoryStore,
    PostgresStore,
    SessionJournal,
    Snapshot,
    SqliteStore,
    StoredInput,
    fork_session,
    load_state,
    replay_session,
)
from effects.cli import main

from .conftest import INPUTS_PER_TURN, START, Tamper, session, turn

SEQ = 1 + INPUTS_PER_TURN  # the record after the first turn, where the other histories' snapshots are taken


class Reads:
    """``store``, noting where each read starts: a load that uses the snapshot after record n reads from n."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.starts: list[int] = []

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        self.starts.append(start)
        return self.store.read(session_id, start, stop)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def starts_of_load(store: EventStore, session_id: str = "s1") -> list[int]:
    """Where the reads of one ``load_state`` start, after checking it gives the fold of the log."""
    reads = Reads(store)
    assert load_state(cast(EventStore, reads), session_id) == replay(list(r.decode() for r in store.read(session_id)))
    return reads.starts


def forked(store: EventStore) -> Snapshot:
    """The snapshot after record ``SEQ`` of a fork of ``s1`` at record 1 that went on with another turn."""
    fork = fork_session(store, "s1", 1, new_id="other", snapshot_every=10_000)
    fork.append(turn(7, START + 1))
    fork.snapshot()
    snapshot = store.load_snapshot("other")
    assert snapshot is not None and snapshot.seq == SEQ
    return snapshot


def written_elsewhere(store: EventStore) -> Snapshot:
    """The snapshot after record ``SEQ`` of a writer whose batch the store refused: it went on with another turn."""
    refused = SessionJournal(MemoryStore(), "s1")
    refused.append(session(0) + turn(7, START + 1))
    refused.snapshot()
    snapshot = refused.store.load_snapshot("s1")
    assert snapshot is not None and snapshot.seq == SEQ
    return snapshot


def test_a_journal_anchors_its_snapshots_and_a_load_uses_them(store: EventStore) -> None:
    journal = SessionJournal(store, "s1", snapshot_every=10_000)
    journal.append(session(2))
    journal.close()
    snapshot = store.load_snapshot("s1")
    assert snapshot is not None and snapshot.seq == 1 + 2 * INPUTS_PER_TURN
    [record] = store.read("s1", snapshot.seq, snapshot.seq)
    assert snapshot.anchor == record.hash
    assert starts_of_load(store) == [snapshot.seq]


@pytest.mark.parametrize("other", [forked, written_elsewhere], ids=["fork", "refused-writer"])
def test_a_snapshot_of_another_history_is_ignored_and_named(
    other: Any, store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    SessionJournal(store, "s1", snapshot_every=10_000).append(session(2))
    foreign = other(store)
    store.save_snapshot("s1", foreign)  # its state hash and bytes agree: only its anchor tells
    with caplog.at_level(logging.WARNING, logger="effects.store"):
        assert starts_of_load(store) == [SEQ, 1]
    [record] = store.read("s1", SEQ, SEQ)
    assert caplog.messages == [
        f"session 's1': the snapshot after record {SEQ} is not of this log: it follows another history of the "
        f"session (its record {SEQ} has chain hash {foreign.anchor and foreign.anchor.hex()}, the log's has "
        f"{record.hash.hex()}); it is ignored and the log folded from its first record (the next snapshot a "
        "journal saves supersedes it)"
    ]
    report = replay_session(store, "s1")
    assert (report.snapshot_seq, report.snapshot_ignored) == (SEQ, True)
    assert report.snapshot_problem.startswith("it follows another history of the session")
    journal = SessionJournal.open(store, "s1")  # appends extend the log's state, not the snapshot's
    journal.append(turn(8, START + 9))
    assert load_state(store, "s1") == replay(session(2) + turn(8, START + 9))


def unanchored(inputs_until: int) -> Snapshot:
    """A snapshot as an older release or a custom store keeps it: the state after ``inputs_until`` inputs."""
    data = encode_state(replay(session(2)[:inputs_until]), format="msgpack")
    return Snapshot(seq=SEQ, schema_version=STATE_FORMAT, state_hash=state_digest(data), data=data)


def test_a_snapshot_without_anchor_is_used_as_before(store: EventStore) -> None:
    SessionJournal(store, "s1", snapshot_every=10_000).append(session(2))
    store.save_snapshot("s1", unanchored(SEQ))
    assert starts_of_load(store) == [SEQ]
    report = replay_session(store, "s1")
    assert (report.snapshot_seq, report.snapshot_problem, report.snapshot_ignored) == (SEQ, "", False)


def test_replay_verify_fails_on_a_wrong_snapshot_a_load_would_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.db"
    store = SqliteStore(path)
    SessionJournal(store, "s1", snapshot_every=10_000).append(session(2))
    store.save_snapshot("s1", unanchored(SEQ - 1))  # no anchor, and one input short
    store.close()
    assert main(["replay", str(path), "s1", "--verify"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "verified: hash chain, 2 turn digests, 0 state hashes"
    assert lines[4].startswith(f"snapshot after record {SEQ}: WRONG: its state is not the log's state after record")
    assert lines[5:] == [
        "Snapshots are caches: export the session and import it into a new store (which makes its own), or",
        f"fork it at its last record (agent-core fork {path} s1 --at {1 + 2 * INPUTS_PER_TURN}).",
    ]


def test_replay_verify_names_a_snapshot_loading_ignores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "log.db"
    store = SqliteStore(path)
    SessionJournal(store, "s1", snapshot_every=10_000).append(session(2))
    store.save_snapshot("s1", written_elsewhere(store))
    store.close()
    assert main(["replay", str(path), "s1", "--verify"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[4].startswith(f"snapshot after record {SEQ}: ignored when loading: it follows another history")
    assert lines[5] == "It costs only a longer fold; the next snapshot a journal saves supersedes it."


def reopened(store: EventStore, *, readonly: bool) -> EventStore:
    if isinstance(store, SqliteStore):
        return SqliteStore(store.path, readonly=readonly)
    assert isinstance(store, PostgresStore)
    return PostgresStore(store.dsn, readonly=readonly)


def test_a_store_from_before_anchors_opens_and_gets_them(sql_store: tuple[EventStore, Tamper]) -> None:
    store, tamper = sql_store
    SessionJournal(store, "s1", snapshot_every=10_000).append(session(2))
    store.save_snapshot("s1", unanchored(SEQ))
    tamper("ALTER TABLE {snapshots} DROP COLUMN anchor")  # the table as the release before anchors made it
    old = reopened(store, readonly=True)
    try:
        assert starts_of_load(old) == [SEQ]
    finally:
        old.close()
    new = reopened(store, readonly=False)  # opened for writing: the column is added
    try:
        journal = SessionJournal.open(new, "s1")
        journal.close()
        snapshot = new.load_snapshot("s1")
        assert snapshot is not None and snapshot.anchor is not None
        assert starts_of_load(new) == [1 + 2 * INPUTS_PER_TURN]
    finally:
        new.close()
