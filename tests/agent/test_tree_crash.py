"""A tree three levels deep with parallel children, its process killed (SIGKILL) at the deepest level or the
middle one, then started again: reopening the root resumes every unfinished child from its own log, nothing
committed is lost, no non-idempotent tool runs twice, and every session ends as in an uninterrupted run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ._deep_team import lookups, sessions
from ._process import crash_and_resume

CHILD = "_deep_team_child.py"


def crashed_and_resumed(target: str, runs: Path, plan: str) -> None:
    before, noted = crash_and_resume(CHILD, target, runs, plan, sessions)
    assert before["crashed"].turn is not None  # killed mid-turn
    assert Counter(noted) == Counter(lookups())  # each lookup ran once


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["finder:1", "researcher:2"])
def test_a_tree_killed_anywhere_resumes_every_child_from_its_log(tmp_path: Path, plan: str) -> None:
    crashed_and_resumed(str(tmp_path / "tree.db"), tmp_path / "runs", plan)


@pytest.mark.slow
def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str) -> None:
    crashed_and_resumed(postgres_dsn, tmp_path / "runs", "finder:2")
