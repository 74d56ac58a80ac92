"""A SQLite commit that fails inside ``COMMIT`` says its outcome is unknown; one that fails before says nothing was
written. The failures are real: a child process may not grow the file (``RLIMIT_FSIZE``), as on a full disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("_commit_child.py")


def run_child(path: Path, size: int) -> list[str]:
    """The child's lines: the batch's error, the next batch's error, the length of the session reopened."""
    done = subprocess.run(
        [sys.executable, str(CHILD), str(path), str(size)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


UNKNOWN = (
    "{path}: the commit failed (disk I/O error): the disk may be full or failing; the batches of this commit may "
    "or may not be durable (SQLite may have written part of the commit before the error); fix the disk, then "
    "reopen the session (SessionJournal.open, open_session) to see what the store holds, and go on from there"
)


def test_an_error_inside_commit_leaves_the_outcome_unknown_and_reopening_tells(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    failed, refused, length = run_child(path, 100_000)  # the batch stays in the page cache until COMMIT
    assert failed == UNKNOWN.format(path=path)
    assert refused == (
        f"session 's1': an earlier batch of this journal failed to commit ({failed}); nothing more is appended "
        "through it: reopen it with SessionJournal.open"
    )
    assert length == "1"  # what reopening tells: here, the commit was not written


@pytest.mark.slow
def test_an_error_before_commit_says_nothing_was_written(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    failed, _, length = run_child(path, 6_000_000)  # larger than the page cache: the rows spill before COMMIT
    assert failed == (
        f"{path}: cannot write or read the file (disk I/O error): the disk may be full, failing, or over a size "
        "limit; nothing of this batch was written; fix that, then retry (a session resumes from what was committed)"
    )
    assert length == "1"
