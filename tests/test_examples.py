"""Every program in examples/ runs as a user would run it, exits 0 and prints its key line.

An example names its key line in its docstring, on a line starting with
``Output includes:``; this test finds new examples by itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
MARKER = "Output includes:"

# Examples written before the marker convention, and their key lines.
KNOWN = {
    "host_driven.py": "final: state 0, running []",
    "fold_log.py": "phase:      idle",
}


def key_line(example: Path) -> str:
    """The text the example's output must contain: its docstring's marker line, else the table above."""
    doc = ast.get_docstring(ast.parse(example.read_text())) or ""
    for line in doc.splitlines():
        if line.strip().startswith(MARKER):
            return line.strip().removeprefix(MARKER).strip()
    if example.name in KNOWN:
        return KNOWN[example.name]
    raise AssertionError(
        f"examples/{example.name} does not say what it prints; expected a docstring line "
        f"'{MARKER} <text from its output>' so that this test can check it"
    )


def test_examples_are_found() -> None:
    assert {"quickstart.py", "custom_tool.py"} <= {e.name for e in EXAMPLES}


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_example_runs_and_prints_its_key_line(example: Path) -> None:
    expected = key_line(example)
    done = subprocess.run(
        [sys.executable, str(example)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"examples/{example.name} exited with {done.returncode}:\n{done.stderr}"
    assert expected in done.stdout, f"examples/{example.name} did not print {expected!r}; it printed:\n{done.stdout}"


def test_the_quick_start_stays_short_and_imports_only_the_two_packages() -> None:
    source = (ROOT / "examples" / "quickstart.py").read_text()
    assert len(source.splitlines()) < 40
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
    assert imported <= {"agent_core", "effects", "asyncio"}
