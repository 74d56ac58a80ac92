"""The documentation's benchmarks page is what the committed results give, never edited by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_benchmarks_page_is_rendered_from_the_results() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "render.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
