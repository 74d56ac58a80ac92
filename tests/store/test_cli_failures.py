"""The real ``agent-core`` command never shows a traceback for what a user can cause: one line on stderr and a
non-zero exit; ``--debug`` adds the traceback; a reader that goes away (``| head``) ends it quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from effects import SessionJournal, SqliteStore
from effects.cli import main

from .conftest import session


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store holding session ``s1`` (two turns: enough output for ``inspect`` to fill a pipe)."""
    path = tmp_path / "log.db"
    journal = SessionJournal(SqliteStore(path, synchronous="NORMAL"), "s1")
    journal.append(session(2))
    journal.close()
    return path


def agent_core(*argv: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """Run the command line in a new interpreter, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "effects", *argv], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60
    )


def one_line(stderr: str, command: str) -> str:
    """The single line of ``stderr``, checked to be a one-line report of ``command`` without a traceback."""
    assert "Traceback" not in stderr, stderr
    [line] = stderr.splitlines()
    assert line.startswith(f"agent-core {command}: "), line
    return line


BAD_LOGS: dict[str, bytes] = {
    "not-json-lines": b"hello\n",
    "bad-utf8": b'\xff\xfe{"type": "session-started"}\n',
    "wrong-record-shape": b'{"type": "session-started", "timestamp": "noon"}\n',
    "not-an-object": b"[1, 2]\n",
    "deeply-nested": b'{"type": "session-started", "timestamp": 1, "session_id": "s", "schema_version": 0}\n'
    + b"[" * 100_000
    + b"]" * 100_000
    + b"\n",
    "nanosecond-timestamps": b'{"type": "session-started", "timestamp": 1767225600000000000, "session_id": "s"}\n',
    "empty": b"",
}


@pytest.mark.parametrize("name", BAD_LOGS)
def test_a_bad_log_to_import_is_one_line(tmp_path: Path, name: str) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_bytes(BAD_LOGS[name])
    done = agent_core("import", str(tmp_path / "new.db"), str(log))
    assert done.returncode == 2
    assert str(log) in one_line(done.stderr, "import")
    assert not (tmp_path / "new.db").exists()  # nothing was created


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: tmp / "missing.jsonl", "No such file or directory"),
        (lambda tmp: tmp, "Is a directory"),
    ],
    ids=["missing-file", "directory"],
)
def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path, make: object, says: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    done = agent_core("import", str(tmp_path / "new.db"), str(path))
    assert done.returncode == 2
    assert says in one_line(done.stderr, "import")


def test_debug_shows_the_traceback_as_well(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_bytes(BAD_LOGS["wrong-record-shape"])
    done = agent_core("import", str(tmp_path / "new.db"), str(log), "--debug")
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("agent-core import: ")
    assert main(["--debug", "import", str(tmp_path / "new.db"), str(log)]) == 2  # before the command, too
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_reader_that_goes_away_ends_the_command_quietly(db: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # like `| head` that already stopped reading
    try:
        done = agent_core("inspect", str(db), "s1", stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_bug_is_one_line_asking_for_debug(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import effects.cli.sessions

    def broken(_: object) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(effects.cli.sessions, "run", broken)
    assert main(["sessions", str(db)]) == 70
    assert one_line(capsys.readouterr().err, "sessions") == (
        "agent-core sessions: unexpected error: ZeroDivisionError: division by zero. This is a bug in agent-core: "
        "run the command again with --debug for the traceback and report it"
    )


def test_an_absurd_timestamp_in_a_store_is_shown_as_a_number_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import msgspec

    from agent_core import SessionStarted, initial_state

    path = tmp_path / "ns.db"
    journal = SessionJournal(SqliteStore(path), "ns")
    # The reducer refuses such a timestamp: the record stands for one another producer wrote (nanoseconds).
    at = 1_767_225_600_000_000_000
    state = msgspec.structs.replace(initial_state(), started=True, session_id="ns", timestamp=at, step=1)
    journal.append([SessionStarted(timestamp=at, session_id="ns")], [state])
    journal.close()
    assert main(["sessions", str(path)]) == 0
    assert "1767225600000000000 ms (not a date)" in capsys.readouterr().out


ADVICE = "expected a store written by `agent-core run --db` or `agent-core import`"


def test_fork_from_a_missing_or_empty_file_names_it_and_creates_nothing(
    tmp_path: Path, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing, empty = tmp_path / "missing.db", tmp_path / "empty.db"
    empty.touch()
    assert main(["fork", str(missing), "s1", "--at", "1"]) == 2
    assert capsys.readouterr().err == f"agent-core fork: {missing}: no such file; {ADVICE}\n"
    assert not missing.exists()
    assert main(["fork", str(empty), "s1", "--at", "1"]) == 2
    assert capsys.readouterr().err == (
        f"agent-core fork: {empty}: an empty SQLite database, not an agent-core store; {ADVICE}\n"
    )
    assert empty.stat().st_size == 0
    assert main(["fork", str(db), "nope", "--at", "1"]) == 2
    assert capsys.readouterr().err == (
        f"agent-core fork: {db}: no session 'nope' in the store (1 sessions; list them with `agent-core sessions DB`)\n"
    )


def test_a_directory_is_said_to_be_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"agent-core sessions: {tmp_path}: a directory, not a file; {ADVICE}\n"


def test_run_with_an_unwritable_log_fails_before_the_session_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").touch()
    target = tmp_path / "file" / "demo.jsonl"  # under a file: no one can write there, root included
    assert main(["run", "--log", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"agent-core run: cannot write the log {target}: Not a directory; nothing was run\n"
