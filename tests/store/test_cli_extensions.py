"""The command line loads a user's rules and guards (``--import MODULE``, the ``agent_core.extensions`` entry
points), and tells a session that names unregistered ones from a damaged or changed log.

Each command runs in a process of its own, as a user runs it: rules and guards are registered per process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each case starts a few Python processes

RULES = """
import agent_core as ac

@ac.register_rule("cli-test-no-rm")
def no_rm(call, state):
    return ac.ALLOW
"""

MAKE = """
import anyio, cli_test_rules
from agent_core import AgentConfig
from effects import SqliteStore, open_session
from effects.testing import ScriptedModel, say

async def main():
    config = AgentConfig(rules=("cli-test-no-rm",))
    async with open_session(SqliteStore("r.db"), "s", ScriptedModel([say("hi")]), config=config) as session:
        session.send("hello")
        await session.turn_done()

anyio.run(main)
"""


def cli(cwd: Path, *argv: str, pythonpath: str = "") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-m", "effects", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    (tmp_path / "cli_test_rules.py").write_text(RULES)
    (tmp_path / "make.py").write_text(MAKE)
    subprocess.run([sys.executable, "make.py"], cwd=tmp_path, check=True, timeout=60)
    return tmp_path


def test_without_the_rules_the_log_is_said_intact_and_the_import_named(store: Path) -> None:
    done = cli(store, "show", "r.db", "s")
    assert done.returncode == 1
    assert "the log is intact, but this process has not registered the rules or guards" in done.stderr
    assert "agent-core --import MODULE" in done.stderr
    assert "behaviour changed" not in done.stderr
    verify = cli(store, "replay", "r.db", "s", "--verify")
    assert verify.returncode == 1
    assert "The log is intact, but this process has not registered" in verify.stdout
    assert "fork" not in verify.stdout  # forking at record 0 keeps nothing: not advised


def test_import_before_or_after_the_command_loads_them(store: Path) -> None:
    for argv in (
        ("--import", "cli_test_rules", "show", "r.db", "s"),
        ("show", "r.db", "s", "--import", "cli_test_rules"),
    ):
        done = cli(store, *argv)
        assert done.returncode == 0, done.stderr
        assert "turn 1 completed" in done.stdout
    verify = cli(store, "--import", "cli_test_rules", "replay", "r.db", "s", "--verify")
    assert verify.returncode == 0 and "verified: hash chain" in verify.stdout


def test_an_import_that_fails_is_one_line_naming_the_module(store: Path) -> None:
    done = cli(store, "--import", "no_such_rules", "show", "r.db", "s")
    assert done.returncode == 2
    assert done.stderr == (
        "agent-core show: --import no_such_rules: no module named 'no_such_rules'; expected a module on the import "
        "path (run the command where the module's file is, or install its package)\n"
    )
    (store / "broken_rules.py").write_text("raise RuntimeError('half-written')\n")
    done = cli(store, "--import", "broken_rules", "show", "r.db", "s")
    assert done.returncode == 2
    assert done.stderr == ("agent-core show: --import broken_rules: importing it failed: RuntimeError: half-written\n")


def test_an_installed_entry_point_loads_them_for_every_command(
    store: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    site = tmp_path_factory.mktemp("site")
    (site / "cli_test_rules.py").write_text(RULES)
    info = site / "cli_test_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-test-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agent_core.extensions]\nrules = cli_test_rules\n")
    (store / "cli_test_rules.py").unlink()  # only the installed one can be found
    done = cli(store, "show", "r.db", "s", pythonpath=str(site))
    assert done.returncode == 0, done.stderr
    assert "turn 1 completed" in done.stdout
