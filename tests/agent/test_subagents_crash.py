"""A planner process killed (SIGKILL) while its researcher children run, then started again: each child
resumes from its own log, no non-idempotent child tool runs twice, and every session ends as an
uninterrupted run's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ._process import crash_and_resume
from ._team import TOPICS

CHILD = "_team_child.py"


def sessions(planner: str) -> tuple[str, ...]:
    """The planner's session and its children's."""
    return (planner, *(f"{planner}:ask-{topic}" for topic in TOPICS))


def crashed_and_resumed(target: str, runs: Path, plan: str) -> None:
    before, noted = crash_and_resume(CHILD, target, runs, plan, sessions)
    assert all(state.turn is not None for state in before.values())  # killed mid-turn, children included
    assert Counter(noted) == Counter(TOPICS)  # each lookup ran once


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["model:1", "model:2"])
def test_a_parent_killed_while_its_children_run_resumes_each_from_its_log(tmp_path: Path, plan: str) -> None:
    crashed_and_resumed(str(tmp_path / "team.db"), tmp_path / "runs", plan)


@pytest.mark.slow
def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str) -> None:
    crashed_and_resumed(postgres_dsn, tmp_path / "runs", "model:2")
