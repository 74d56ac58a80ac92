"""The README's quick start runs as printed, and the commands of the README and the guides name things that exist."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from effects.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
GUIDES = {path: path.read_text() for path in sorted((ROOT / "docs").rglob("*.md"))}
EVERY_PAGE = "\n".join([README, *GUIDES.values()])


def python_blocks() -> list[str]:
    """The README's ```python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.slow
def test_the_quick_start_runs_and_answers(tmp_path: Path) -> None:
    quick_start = python_blocks()[0]
    script = tmp_path / "quick_start.py"
    script.write_text(quick_start)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 + 3 = 5 and 10 + 20 = 30."


def test_the_first_lines_give_the_two_commands_and_ci_runs_the_second() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README[:600], re.S)
    assert len(commands) == 2
    assert "agent-core run" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_the_log_commands_run_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block of commands on ``demo.db`` in the durable sessions guide, one after the other in one folder, as a
    reader would paste them."""
    [block] = [b for b in re.findall(r"```sh\n(.*?)```", EVERY_PAGE, re.S) if "agent-core import demo.db" in b]
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--db", "demo.db"]) == 0
    ran = 0
    for line in block.splitlines():
        command = shlex.split(line.split(" # ")[0])
        if "postgresql" in line or not command:
            continue  # the PostgreSQL lines need a server: tests/store runs the same commands against one
        assert command[0] == "agent-core"
        assert main(command[1:]) == 0, line
        ran += 1
    assert ran >= 7


def test_every_agent_core_subcommand_in_the_documentation_exists(capsys: pytest.CaptureFixture[str]) -> None:
    shell = "\n".join(re.findall(r"```sh\n(.*?)```", EVERY_PAGE, re.S))
    used = sorted(set(re.findall(r"(?:^|/)agent-core (\w[\w-]*)", shell, re.M)))
    assert {"run", "chat", "replay"} <= set(used)
    for command in used:
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args([command, "--help"])
        assert done.value.code == 0, f"the documentation uses 'agent-core {command}', which does not exist"
    capsys.readouterr()
