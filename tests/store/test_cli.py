"""The log commands: sessions, replay, inspect, fork, export and import, for people and for programs."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from agent_core import encode_log, replay, state_hash
from effects import SessionJournal, SqliteStore
from effects.cli import main

from .conftest import INPUTS_PER_TURN, START, session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store holding session ``s1`` (two turns)."""
    path = tmp_path / "log.db"
    journal = SessionJournal(SqliteStore(path, synchronous="NORMAL"), "s1", snapshot_every=20)
    journal.append(session(2))
    journal.close()
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``agent-core ARGV``; returns the exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sessions_lists_each_session(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "sessions", str(db))
    assert code == 0
    assert out.splitlines() == [
        "SESSION  INPUTS  PHASE  FIRST INPUT               LAST ACTIVITY             FORKED FROM",
        "s1       65      idle   2026-01-01 00:00:00.000Z  2026-01-01 00:00:00.002Z",
    ]
    code, out, _ = run(capsys, "sessions", str(db), "--json")
    [listed] = json.loads(out)
    assert (listed["session_id"], listed["length"], listed["phase"], listed["parent"]) == ("s1", 65, "idle", None)
    assert listed["first_timestamp"] == START


def test_sessions_lists_a_page_and_says_how_to_see_the_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "many.db"
    store = SqliteStore(db, synchronous="NORMAL")
    for n in range(5):
        SessionJournal(store, f"s{n}").append(session(1)[:2])
    store.close()
    code, out, _ = run(capsys, "sessions", str(db), "--limit", "2", "--offset", "1")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:3]] == ["s1", "s2"]
    assert lines[3:] == ["… sessions 2 to 3 of 5; the next with --offset 3"]
    assert [s["session_id"] for s in json.loads(run(capsys, "sessions", str(db), "--offset", "3", "--json")[1])] == [
        "s3",
        "s4",
    ]
    assert run(capsys, "sessions", str(db), "--offset", "9")[1] == f"{db}: no sessions past the first 5\n"
    bound = "expected --limit of 1 or more and --offset of 0 or more, each at most 9,223,372,036,854,775,807"
    for limit, offset in (("-1", "0"), ("0", "0"), ("1", str(2**63)), (str(10**20), "0")):
        code, out, err = run(capsys, "sessions", str(db), "--limit", limit, "--offset", offset)
        assert (code, out) == (2, "")
        assert err == f"agent-core sessions: {bound}; got --limit {limit} --offset {offset}\n"
    assert run(capsys, "sessions", str(db), "--offset", str(2**63 - 1))[1] == f"{db}: no sessions past the first 5\n"
    code, out, _ = run(capsys, "stats", str(db), "--limit", "2")  # a page of summary lines too
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["s0", "s1", "…"]
    assert out.splitlines()[-1] == "… sessions 1 to 2 of 5; the next with --offset 2"


def test_replay_verify_reports_what_it_checked(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", str(db), "s1", "--verify")
    assert code == 0
    assert out.splitlines() == [
        "session s1: 65 records replayed",
        "verified: hash chain, 2 turn digests, 1 state hashes, the snapshot after record 65",
        "phase: idle; turns: 2; last outcome: completed",
        f"state hash: {state_hash(replay(session(2)))}",
    ]


def test_replay_shows_progress_on_stderr_when_asked(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "replay", str(db), "s1", "--progress")
    assert code == 0 and err.endswith("\rreplaying s1: 65/65 records (100%)\n")


def test_replay_verify_stops_at_a_divergence_with_exit_1(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute(f"UPDATE inputs SET turn_digest = zeroblob(32) WHERE seq = {1 + INPUTS_PER_TURN}")
    code, out, _ = run(capsys, "replay", str(db), "s1", "--verify")
    assert code == 1
    assert out.splitlines()[:4] == [
        "session s1: DIVERGED at record 33 (re-act-observed)",
        "  compared: turn digest",
        f"  expected (logged):  {'00' * 32}",
        f"  actual (replayed):  {json.loads(run(capsys, 'replay', str(db), 's1', '--verify', '--json')[1])['divergence']['actual']}",
    ]
    assert f"agent-core fork {db} s1 --at 32" in out


def test_a_damaged_log_is_one_line_and_exit_1(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM inputs WHERE seq = 3")
    code, out, err = run(capsys, "replay", str(db), "s1")
    assert (code, out) == (1, "")
    assert err == (
        "agent-core replay: session 's1', record 3: found record 4 where record 3 belongs (missing or moved); "
        "the log is damaged from here on (restore it from a backup or an export, or fork the session before "
        "this record)\n"
    )


def test_inspect_shows_the_timeline_and_the_state_at_a_record(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", str(db), "s1", "--at", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "session s1: 65 inputs; showing records 1 to 3"
    assert lines[2].split() == ["2", "+0.001s", "user-message-received", "idle", "->", "thinking", "'question", "0'"]
    assert lines[3].strip() == "start wait-until:deadline:1:1767227400001, call-llm:1:0:0"  # the default 30 minutes
    assert lines[4].split()[:6] == ["3", "+0.001s", "re-act-observed", "thinking", "->", "acting"]
    assert [line.strip() for line in lines[5:8]] == [
        "tokens: 100 in, 10 out",
        "done call-llm:1:0:0 after 0 ms",
        "start call-tool:c0.0.0, call-tool:c0.0.1, call-tool:c0.0.2",
    ]
    assert "  phase: acting (turn 1: 1 model calls, 3 tool calls, 110 tokens)" in lines
    assert (
        "  effects that should run: wait-until:deadline:1:1767227400001, call-tool:c0.0.0, call-tool:c0.0.1, call-tool:c0.0.2"
        in lines
    )


def test_inspect_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", str(db), "s1", "--from", "60", "--json")
    data = json.loads(out)
    assert code == 0 and data["at"] == 65
    assert [entry["seq"] for entry in data["timeline"]] == [60, 61, 62, 63, 64, 65]
    assert data["timeline"][-1]["phase_after"] == "idle"
    assert data["state"]["state_hash"] == state_hash(replay(session(2)))


def test_fork_then_export_and_import(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "fork", str(db), "s1", "--at", "10")[1].splitlines()[0] == "forked s1@10 from s1 at record 10"
    exported = tmp_path / "fork.jsonl"
    code, _, err = run(capsys, "export", str(db), "s1@10", "-o", str(exported))
    assert code == 0 and err == f"wrote 10 inputs of s1@10 to {exported}\n"
    assert exported.read_bytes() == encode_log(session(2)[:10])
    other = tmp_path / "other.db"
    code, out, _ = run(capsys, "import", str(other), str(exported), "--as", "copy", "--json")
    assert code == 0 and json.loads(out) == {"session_id": "copy", "inputs": 10, "schema_version": 1}
    code, out, _ = run(capsys, "export", str(other), "copy")
    assert out.encode() == encode_log(session(2)[:10])


def test_an_origin_log_imports_with_its_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "import", str(tmp_path / "new.db"), str(FIXTURES / "origin-v0.jsonl"))
    assert code == 0
    assert (
        out
        == f"imported 14 inputs from {FIXTURES / 'origin-v0.jsonl'} as session origin-v0 (schema version 0, upcast when read)\n"
    )


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (encode_log(session(1))[:-20], "record 33: Input data was truncated; expected a JSON-lines agent-core log"),
        (b'{"type":"timer-fired","timestamp":1}\n', "record 1: a log must start with a session-started record"),
        (
            encode_log(session(0)).replace(b'"schema_version":1', b'"schema_version":4'),
            "record 1: schema version 4 is newer than this release reads (1); upgrade agent-core; nothing was changed",
        ),
    ],
    ids=["truncated", "no-session-started", "unknown-schema"],
)
def test_a_bad_log_file_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, error: str
) -> None:
    log, store = tmp_path / "bad.jsonl", tmp_path / "new.db"
    log.write_bytes(content)
    code, out, err = run(capsys, "import", str(store), str(log))
    assert (code, out) == (2, "")
    assert err.startswith(f"agent-core import: {log}: {error}") and err.count("\n") == 1
    assert not store.exists()


@pytest.mark.parametrize("command", ["sessions", "replay", "inspect", "export", "fork"])
def test_a_file_that_is_not_a_store_is_one_line_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"not a database at all, just text" * 100)
    argv = (
        [command, str(path)] + ([] if command == "sessions" else ["s1"]) + (["--at", "1"] if command == "fork" else [])
    )
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == (
        f"agent-core {command}: {path}: not an agent-core store (file is not a database); "
        "expected a store written by `agent-core run --db` or `agent-core import`\n"
    )
    assert path.read_bytes() == b"not a database at all, just text" * 100


def test_an_unknown_session_names_the_command_to_list_them(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "inspect", str(db), "nope")
    assert code == 2
    assert err == (
        f"agent-core inspect: {db}: no session 'nope' in the store (1 sessions; list them with "
        "`agent-core sessions DB`)\n"
    )


def test_run_with_a_store_logs_the_demo_and_resumes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = run(capsys, "run")[1].splitlines()[-1]
    db = str(tmp_path / "demo.db")
    code, out, _ = run(capsys, "run", "--db", db)
    assert code == 0 and out.splitlines()[-1] == plain  # the same session, now durable
    inputs = json.loads(run(capsys, "sessions", db, "--json")[1])[0]["length"]
    code, out, _ = run(capsys, "run", "--db", db, "--session", "demo")
    assert code == 0 and out.splitlines()[-1] == plain  # resumed: every question was answered, nothing is added
    assert json.loads(run(capsys, "sessions", db, "--json")[1])[0]["length"] == inputs
    assert run(capsys, "replay", db, "demo", "--verify")[1].splitlines()[-1] == plain


def test_run_session_needs_a_store(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "--session", "x")
    assert code == 2
    assert err == "agent-core run: --session needs --db PATH (the store that holds the session)\n"


def test_a_record_of_a_newer_schema_is_refused_with_advice(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE inputs SET version = 2 WHERE seq = 3")
    code, out, err = run(capsys, "replay", str(db), "s1")
    assert (code, out) == (2, "")
    assert err == (
        "agent-core replay: session 's1': record 3: schema version 2 is newer than this release reads (1); "
        "upgrade agent-core; nothing was changed\n"
    )


def test_a_store_in_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "import", str(tmp_path / "no" / "such" / "log.db"), str(FIXTURES / "golden-v1.jsonl"))
    assert code == 2
    assert err.startswith(f"agent-core import: {tmp_path / 'no' / 'such' / 'log.db'}: cannot open it (unable to open")


def test_every_store_verb_works_the_same_on_postgresql(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same commands on a SQLite file and on PostgreSQL (a URL where the path goes, or --dsn) print the same."""
    golden = str(FIXTURES / "golden-v1.jsonl")
    sqlite = str(tmp_path / "log.db")
    outputs = []
    for store, flag in ((sqlite, []), (postgres_dsn, []), (postgres_dsn, ["--dsn"])):
        target = [*flag, store]
        commands = [
            ["import", *target, golden, "--as", "g"] if not flag else ["import", golden, *target, "--as", "g2"],
            ["sessions", *target],
            ["replay", *target, "g", "--verify"],
            ["inspect", *target, "g", "--at", "5"],
            ["export", *target, "g", "--until", "4"],
            ["fork", *target, "g", "--at", "3", "--as", "f" if not flag else "f2"],
        ]
        outputs.append([run(capsys, *argv) for argv in commands])
    sqlite_run, url_run, dsn_run = outputs
    assert all(code == 0 and err == "" for code, _, err in sqlite_run + url_run + dsn_run)
    assert [out.replace(sqlite, "STORE") for _, out, _ in sqlite_run] == [
        out.replace(postgres_dsn, "STORE") for _, out, _ in url_run
    ]
    assert "g2 " in dsn_run[1][1] and "f2 from g" in dsn_run[5][1]


def test_sessions_shows_each_phase_and_a_damaged_session_without_failing_the_list(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SqliteStore(db)
    SessionJournal(store, "busy").append(session(1, session_id="busy")[:3])
    SessionJournal(store, "hurt").append(session(1, session_id="hurt"))
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE inputs SET hash = zeroblob(16) WHERE seq = 2 AND session = 3")
    code, out, _ = run(capsys, "sessions", str(db))
    assert code == 0
    rows = [re.split(r"\s{2,}", line) for line in out.splitlines()[1:]]
    assert [(row[0], row[2]) for row in rows] == [("s1", "idle"), ("busy", "acting"), ("hurt", "damaged at record 2")]


def test_a_truncated_store_is_damage_in_one_line_and_exit_1(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    code, out, err = run(capsys, "sessions", str(db))
    assert (code, out) == (1, "")
    assert err == (
        f"agent-core sessions: {db}: the database file is damaged (database disk image is malformed): truncated or "
        "overwritten; restore it from a backup, or export the sessions that still read with `agent-core export`\n"
    )


def test_run_logs_to_postgresql_and_resumes_there(postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    plain = run(capsys, "run")[1].splitlines()[-1]
    assert run(capsys, "run", "--dsn", postgres_dsn)[1].splitlines()[-1] == plain
    inputs = json.loads(run(capsys, "sessions", "--dsn", postgres_dsn, "--json")[1])[0]["length"]
    assert run(capsys, "run", "--db", postgres_dsn, "--session", "demo")[1].splitlines()[-1] == plain
    assert json.loads(run(capsys, "sessions", postgres_dsn, "--json")[1])[0]["length"] == inputs
