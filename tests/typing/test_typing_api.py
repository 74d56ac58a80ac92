"""The public API's static types: ``check_api.py`` must pass ``mypy --strict`` and run as Python."""

from __future__ import annotations

import importlib.util
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CHECK = HERE / "check_api.py"


def test_check_api_runs() -> None:
    # Every use in the file is real: it runs without errors, assert_type being a no-op at run time.
    runpy.run_path(str(CHECK), run_name="check_api")


@pytest.mark.slow
def test_check_api_passes_mypy_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]'); the static types were not checked")
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path), str(CHECK)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"mypy --strict {CHECK.name} failed:\n{run.stdout}{run.stderr}"
