"""Running a test's process that may kill itself (SIGKILL) partway, and telling how it ended."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def run(script: str, *args: str | Path) -> int:
    """Run ``script`` (a file beside this one) with ``args`` (an empty one left out: an optional argument not
    given) to its end or its death by SIGKILL; returns its exit code (negative: that signal). Any other end
    fails the test with the process's own error output."""
    given = [str(arg) for arg in args if arg != ""]
    process = subprocess.run(
        [sys.executable, str(HERE / script), *given], cwd=ROOT, capture_output=True, timeout=60, check=False
    )
    if process.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(
            f"{script} {' '.join(given)} failed ({process.returncode}); expected it to end or be killed:\n"
            f"{process.stderr.decode()}"
        )
    return process.returncode
