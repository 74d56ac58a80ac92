"""Running a test's process that may kill itself (SIGKILL) partway, and telling how it ended."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

CHILD = Path(__file__).with_name("_team_child.py")
ROOT = Path(__file__).resolve().parents[2]


def run(target: str, runs: Path, session: str, plan: str = "") -> int:
    """Run the planner's process to its end or its death; returns its exit code (negative: that signal)."""
    process = subprocess.run(
        [sys.executable, str(CHILD), target, str(runs), session, *([plan] if plan else [])],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if process.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"plan {plan!r} failed ({process.returncode}):\n{process.stderr.decode()}")
    return process.returncode
