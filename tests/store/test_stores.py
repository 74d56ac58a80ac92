"""The EventStore protocol, on every backend: appends, optimistic concurrency, reads, listing, snapshots."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent_core import encode_input
from effects import (
    ConcurrencyError,
    EventStore,
    NotAStore,
    Origin,
    SessionJournal,
    SessionNotFound,
    Snapshot,
    SqliteStore,
    StoreDamaged,
    StoredInput,
    StoreUnavailable,
    chain_hash,
    sessions_page,
)

from .conftest import START, session


def records(count: int, *, first: int = 1, previous: bytes = bytes(16)) -> list[StoredInput]:
    """``count`` chained records of the scripted session, numbered from ``first``."""
    out = []
    for seq, inp in enumerate(session(3)[first - 1 : first - 1 + count], start=first):
        data = encode_input(inp, format="msgpack")
        previous = chain_hash(previous, data)
        out.append(StoredInput(seq=seq, schema_version=1, data=data, hash=previous))
    return out


def test_append_then_read_returns_the_records_in_order(store: EventStore) -> None:
    written = records(5)
    store.append("s1", written[:2], expected=0)
    store.append("s1", written[2:], expected=2)
    assert list(store.read("s1")) == written
    assert list(store.read("s1", 2, 3)) == written[1:3]
    assert list(store.read("s1", 4)) == written[3:]


def test_a_stale_writer_gets_a_concurrency_error_and_writes_nothing(store: EventStore) -> None:
    written = records(3)
    store.append("s1", written[:2], expected=0)
    with pytest.raises(ConcurrencyError) as raised:
        store.append("s1", written[1:], expected=1)
    assert str(raised.value) == (
        "session 's1' has 2 inputs, but the append expected 1: another writer appended first; "
        "reload the session and retry"
    )
    assert (raised.value.session_id, raised.value.expected, raised.value.actual) == ("s1", 1, 2)
    assert list(store.read("s1")) == written[:2]


def test_a_batch_not_following_the_stored_last_record_is_refused_at_the_right_length(store: EventStore) -> None:
    written = records(3)
    store.append("s1", written[:2], expected=0)
    elsewhere = records(1, first=3, previous=chain_hash(bytes(16), b"a record this store never took"))
    with pytest.raises(ConcurrencyError) as raised:
        store.append("s1", elsewhere, expected=2)
    assert str(raised.value) == (
        "session 's1' has 2 inputs, as the append expected, but its last is not the one the batch follows: "
        "another writer appended first, or an earlier batch of this writer was refused; reload the session and retry"
    )
    assert raised.value.diverged and (raised.value.expected, raised.value.actual) == (2, 2)
    assert list(store.read("s1")) == written[:2]
    store.append("s1", written[2:], expected=2)  # the batch that does follow it goes in
    assert list(store.read("s1")) == written


def test_creating_a_session_twice_is_a_concurrency_error(store: EventStore) -> None:
    store.append("s1", records(1), expected=0)
    with pytest.raises(ConcurrencyError, match="has 1 inputs, but the append expected 0"):
        store.append("s1", records(1), expected=0)


def test_records_must_continue_the_log(store: EventStore) -> None:
    with pytest.raises(ValueError, match=r"record has seq 2, expected 1 \(the log has 0 inputs\)"):
        store.append("s1", records(2, first=2), expected=0)
    with pytest.raises(SessionNotFound):
        store.session("s1")


def test_unknown_session_names_what_to_do(store: EventStore) -> None:
    with pytest.raises(SessionNotFound) as raised:
        list(store.read("nope"))
    assert str(raised.value) == "no session 'nope' in the store (0 sessions; the store is empty)"
    store.append("s1", records(1), expected=0)
    with pytest.raises(SessionNotFound, match=r"\(1 sessions; list them with `agent-core sessions DB`\)"):
        store.session("nope")


def test_sessions_lists_length_times_head_and_parent(store: EventStore) -> None:
    written = records(4)
    store.append("s1", written, expected=0)
    store.append("fork", written[:2], expected=0, parent=Origin(session_id="s1", seq=2))
    first, fork = store.sessions()
    assert (first.session_id, first.length, first.head, first.parent) == ("s1", 4, written[-1].hash, None)
    assert (first.first_timestamp, first.last_timestamp) == (START, START + 1)
    assert (fork.session_id, fork.length, fork.parent) == ("fork", 2, Origin(session_id="s1", seq=2))
    assert store.session("fork") == fork


def test_a_page_of_sessions_reads_only_the_named_ones_in_creation_order(store: EventStore) -> None:
    names = ["plan", "plan:ask-b", "other", "plan:ask-a", "plan:ask-a:deep-1", "plan_b", "pl%n:x", "ünï:1"]
    for name in names:
        store.append(name, records(1), expected=0)
    assert sessions_page(store) == (store.sessions(), len(names))
    page, total = sessions_page(store, offset=2, limit=3)
    assert ([info.session_id for info in page], total) == (names[2:5], len(names))
    below, total = sessions_page(store, prefix="plan:")  # a prefix is text, never a pattern
    assert ([info.session_id for info in below], total) == (["plan:ask-b", "plan:ask-a", "plan:ask-a:deep-1"], 3)
    assert sessions_page(store, prefix="plan:", limit=1)[0] == below[:1]
    assert [i.session_id for i in sessions_page(store, prefix="pl%")[0]] == ["pl%n:x"]
    assert [i.session_id for i in sessions_page(store, prefix="ünï:")[0]] == ["ünï:1"]  # characters, not bytes
    assert sessions_page(store, prefix="nobody") == ([], 0)
    assert sessions_page(store, offset=len(names)) == ([], len(names))
    largest = 2**63 - 1  # SQL's largest integer: the page is empty, not an error
    assert sessions_page(store, offset=largest, limit=largest) == ([], len(names))
    assert sessions_page(store, limit=largest)[0] == store.sessions()
    bound = "expected an offset and a limit from 0 to 9,223,372,036,854,775,807 (the largest integer SQL stores hold)"
    with pytest.raises(ValueError) as refused:
        sessions_page(store, offset=-1)
    assert str(refused.value) == f"{bound}, got offset=-1, limit=None"
    for offset, limit in ((largest + 1, None), (0, largest + 1), (0, -1)):
        with pytest.raises(ValueError) as refused:
            sessions_page(store, offset=offset, limit=limit)
        assert str(refused.value) == f"{bound}, got offset={offset}, limit={limit}"


def test_snapshots_keep_the_newest_and_load_the_latest_before_a_point(store: EventStore) -> None:
    store.append("s1", records(5), expected=0)
    older = Snapshot(seq=2, schema_version=1, state_hash=b"a" * 32, data=b"older")
    newer = Snapshot(seq=4, schema_version=1, state_hash=b"b" * 32, data=b"newer")
    assert store.load_snapshot("s1") is None
    store.save_snapshot("s1", older)
    assert store.load_snapshot("s1") == older
    assert store.load_snapshot("s1", at_most=1) is None
    store.save_snapshot("s1", newer)
    assert store.load_snapshot("s1") == newer
    assert store.load_snapshot("s1", at_most=3) is None  # only the newest is kept by default


def test_sqlite_keeps_more_snapshots_when_asked(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db", keep_snapshots=2)
    store.append("s1", records(5), expected=0)
    for seq in (2, 3, 4):
        store.save_snapshot("s1", Snapshot(seq=seq, schema_version=1, state_hash=bytes(32), data=b"x" * seq))
    assert [store.load_snapshot("s1", at_most=n) is not None for n in (2, 3, 4)] == [False, True, True]


def test_sqlite_survives_reopening_and_shares_the_file(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    written = records(4)
    first = SqliteStore(path)
    first.append("s1", written[:2], expected=0)
    second = SqliteStore(path)
    second.append("s1", written[2:], expected=2)
    first.close()
    second.close()
    reopened = SqliteStore(path, readonly=True)
    assert list(reopened.read("s1")) == written


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    """Two journals on two connections race for the same session: one wins each round, the other is told."""
    path = tmp_path / "log.db"
    inputs = session(2)
    SessionJournal(SqliteStore(path), "s1").append(inputs[:1])
    journals = [SessionJournal.open(SqliteStore(path, synchronous="NORMAL"), "s1") for _ in range(2)]
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def write(journal: SessionJournal) -> None:
        barrier.wait()
        try:
            journal.append(inputs[1:])
            outcomes.append("ok")
        except ConcurrencyError as error:
            outcomes.append(f"lost at {error.actual}")

    threads = [threading.Thread(target=write, args=(journal,)) for journal in journals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost at " + str(len(inputs)), "ok"]
    assert [r.decode() for r in SqliteStore(path).read("s1")] == inputs


def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are notes, not a database" * 200)
    for readonly in (True, False):
        with pytest.raises(NotAStore) as raised:
            SqliteStore(path, readonly=readonly)
        assert str(raised.value).startswith(f"{path}: not an agent-core store (file is not a database); expected")
    assert path.read_bytes() == b"these are notes, not a database" * 200


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(NotAStore, match="a SQLite database with other tables, not an agent-core store"):
        SqliteStore(path)


def test_readonly_never_creates_a_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    with pytest.raises(NotAStore, match=r"missing\.db: no such file; expected a store written by"):
        SqliteStore(path, readonly=True)
    assert not path.exists()


def test_a_store_of_another_format_names_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '9' WHERE key = 'format'")
    with pytest.raises(NotAStore, match="store format 9, this release reads format 1; open it with the release"):
        SqliteStore(path)


def test_a_truncated_database_is_damaged_not_a_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    store = SqliteStore(path)
    SessionJournal(store, "s1").append(session(30))
    store.close()  # the last connection folds the write-ahead log into the file
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    for readonly in (True, False):
        with pytest.raises(StoreDamaged) as raised:
            SqliteStore(path, readonly=readonly)
        assert str(raised.value) == (
            f"{path}: the database file is damaged (database disk image is malformed): truncated or overwritten; "
            "restore it from a backup, or export the sessions that still read with `agent-core export`"
        )


def test_writing_to_a_read_only_store_says_so(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    SessionJournal(SqliteStore(path), "s1").append(session(0))
    journal = SessionJournal.open(SqliteStore(path, readonly=True), "s1")
    with pytest.raises(StoreUnavailable) as raised:
        journal.append(session(1)[1:2])
    assert str(raised.value) == (
        f"{path}: the store is read-only (attempt to write a readonly database); nothing was written; make the "
        "file and its folder writable (SQLite writes -wal and -shm files beside it), or use a command that only reads"
    )


FULL_DISK = """
import os, resource, signal, sys
sys.path.insert(0, sys.argv[2])
from effects import SessionJournal, SqliteStore, StoreUnavailable
from tests.store.conftest import session
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
journal = SessionJournal(SqliteStore(sys.argv[1]), "s1")
journal.append(session(0))
limit = os.path.getsize(sys.argv[1] + "-wal") + 8192
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))  # as a full disk would
try:
    journal.append(session(60)[1:])
except StoreUnavailable as error:
    print(error)
"""


def test_a_disk_that_refuses_writes_is_not_called_damage(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(path), root], capture_output=True, text=True)
    assert done.stdout == (  # the batch waits in the page cache: the write that fails is COMMIT's
        f"{path}: the commit failed (disk I/O error): the disk may be full or failing; the batches of this commit "
        "may or may not be durable (SQLite may have written part of the commit before the error); fix the disk, "
        "then reopen the session (SessionJournal.open, open_session) to see what the store holds, and go on from "
        "there\n"
    )
    assert [r.seq for r in SqliteStore(path, readonly=True).read("s1")] == [1]
