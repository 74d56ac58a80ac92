"""Every code block of the README and the guides runs as printed, unless it says why it cannot.

A ```python block runs as a script of its own; the ```sh blocks of one page run
in order in one shell, in one scratch directory, with this interpreter's
``agent-core`` first on the path (so one block can use the store an earlier one
wrote). A block preceded by a line ``<!-- not run: REASON -->`` is skipped, and
the reason is required. A block preceded by ``<!-- expect: TEXT -->`` must print
TEXT (a line of its output, whole).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

pytestmark = pytest.mark.slow  # each block runs in a process of its own

_BLOCK = re.compile(
    r"(?:<!-- (?P<mark>not run|expect): (?P<note>.*?) -->\n[ \t]*)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S
)


class Block(NamedTuple):
    page: Path
    line: int
    lang: str
    code: str
    skip: str | None  # the reason given, None for a block that runs
    expect: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The page's fenced code blocks with their marks, in order."""
    text = page.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        mark, note = match.group("mark"), match.group("note") or ""
        line = text.count("\n", 0, match.start("lang")) + 1
        skip = note if mark == "not run" else None
        expect = note if mark == "expect" else ""
        code = textwrap.dedent(match.group("code"))  # a block in a list item is indented with it
        found.append(Block(page, line, match.group("lang"), code, skip, expect))
    return found


ALL = [block for page in PAGES for block in blocks(page)]
PYTHON = [b for b in ALL if b.lang == "python"]
SHELL_PAGES = sorted({b.page for b in ALL if b.lang in ("sh", "bash", "console")})


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENT_CORE_"))}
    return {**clean, "PATH": f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}", "PYTHONUNBUFFERED": "1"}


def _check(block: Block, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, f"{block} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    if block.expect:
        assert block.expect in done.stdout.splitlines(), f"{block} did not print {block.expect!r}:\n{done.stdout}"


def test_every_skipped_block_says_why() -> None:
    unexplained = [str(b) for b in ALL if b.skip is not None and b.skip.strip() in ("", "TODO")]
    assert unexplained == []


@pytest.mark.parametrize("block", [b for b in PYTHON if b.skip is None], ids=str)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(block.code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120
    )
    _check(block, done)


@pytest.mark.parametrize("page", SHELL_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_shell_blocks_run_in_order(page: Path, tmp_path: Path) -> None:
    for block in blocks(page):
        if block.lang not in ("sh", "bash", "console") or block.skip is not None:
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        _check(block, done)
