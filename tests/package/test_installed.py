"""What a user who installed the wheel (with only the ``temporal`` extra) meets: type markers and a license, the
demo, their own typed file, missing extras that say how to install them from that wheel, and ``submit`` that
exits cleanly on every documented failure."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tarfile
import uuid
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from postgres_server import free_port

from .conftest import Installed

pytestmark = [pytest.mark.installed, pytest.mark.slow]

USER_FILE = Path(__file__).with_name("user_agent.py")


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd``, a folder away from this tree (``python -c`` would import the tree's packages from
    the current folder instead of the installed ones)."""
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, check=False)


def test_the_wheel_and_the_sdist_carry_the_type_markers_the_license_and_the_metadata(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        [metadata_name] = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    assert {"agent_core/py.typed", "effects/py.typed", "effects/_ui/assets/app.js"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert metadata["License-Expression"] == "MIT"
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert "event-sourcing" in metadata["Keywords"]
    assert 'temporalio>=1.35; extra == "temporal"' in metadata.get_all("Requires-Dist")
    with tarfile.open(installed.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        assert {f"{top}/LICENSE", f"{top}/agent_core/py.typed", f"{top}/effects/py.typed"} <= set(sdist.getnames())


def test_the_demo_runs_from_the_wheel(installed: Installed, tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    done = run([installed.bin("agent-core"), "run", "--db", db], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "state hash:" in done.stdout
    verified = run([installed.bin("agent-core"), "replay", db, "demo", "--verify"], tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_users_file_type_checks_against_the_wheel_and_runs(installed: Installed, tmp_path: Path) -> None:
    """mypy --strict sees the installed packages' types (py.typed): the file's ``type: ignore`` on a misuse would
    be reported unused were they missing, and ``import-not-found`` would fail it first."""
    user = tmp_path / "user"  # away from this tree, so only the installed package can be found
    user.mkdir()
    shutil.copy(USER_FILE, user / USER_FILE.name)
    mypy = [sys.executable, "-m", "mypy", "--strict", "--python-executable", installed.bin("python")]
    checked = run([*mypy, "--cache-dir", str(tmp_path / "mypy"), USER_FILE.name], cwd=user)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = run([installed.bin("python"), USER_FILE.name, str(tmp_path / "user.db")], cwd=user)
    assert (ran.returncode, ran.stdout) == (0, "5, HI\n"), ran.stderr


@pytest.mark.parametrize(
    ("extra", "statement", "what"),
    [
        ("openai", "from effects.providers import OpenAIModel; OpenAIModel('m', api_key='k')", "OpenAIModel"),
        ("ui", "import effects; effects.create_app(effects.MemoryStore())", "the session viewer"),
        ("otel", "from effects._observe._otel import to_otel; to_otel(None)", "OpenTelemetry export"),
    ],
)
def test_a_missing_extra_says_how_to_install_it_from_this_wheel(
    installed: Installed, extra: str, statement: str, what: str, tmp_path: Path
) -> None:
    code = f"try:\n    {statement}\nexcept ImportError as e:\n    print(e)"
    done = run([installed.bin("python"), "-c", code], tmp_path)
    requirement = shlex.quote(f"agent-core[{extra}] @ {installed.wheel.resolve().as_uri()}")
    command = f"{shlex.quote(installed.bin('python'))} -m pip install {requirement}"
    assert done.stdout.startswith(f"{what} needs the '{extra}' extra of agent-core, which is not installed")
    assert done.stdout.endswith(f"; install it with: {command}\n"), done.stdout


def test_agent_core_testing_without_hypothesis_says_how_to_install_it(installed: Installed, tmp_path: Path) -> None:
    done = run([installed.bin("python"), "-c", "import agent_core.testing"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "ImportError: agent_core.testing needs hypothesis, from the 'testing' extra of agent-core, which is not "
        f"installed (No module named 'hypothesis'); install it with: {shlex.quote(installed.bin('python'))} -m pip "
        "install 'hypothesis>=6.100'"
    )


def test_submit_imports_only_temporals_client(installed: Installed, tmp_path: Path) -> None:
    code = (
        "import sys, effects.cli.submit, effects.temporal\nprint(effects.__file__, 'temporalio.worker' in sys.modules)"
    )
    done = run([installed.bin("python"), "-c", code], tmp_path)
    where, worker_imported = done.stdout.split()
    assert (done.returncode, worker_imported) == (0, "False"), done.stderr
    assert where.startswith(str(installed.venv))  # the installed package, not this tree


def test_submit_with_only_the_temporal_extra_fails_in_one_line_every_time(
    installed: Installed, temporal_server, tmp_path: Path
) -> None:
    """An unreachable server used to abort the interpreter at exit here (exit 134); no worker, to hang."""
    agent_core = installed.bin("agent-core")
    for _ in range(5):
        address = f"127.0.0.1:{free_port()}"
        done = run([agent_core, "submit", "s", "hi", "--temporal", address], tmp_path)
        assert (done.returncode, done.stdout) == (69, ""), done.stderr
        assert done.stderr.startswith(f"agent-core submit: cannot reach the Temporal server at {address} (")
        assert done.stderr.count("\n") == 1, done.stderr
    for _ in range(5):
        queue = f"nobody-{uuid.uuid4().hex}"
        args = ["--temporal", temporal_server.address, "--task-queue", queue, "--timeout", "1"]
        done = run([agent_core, "submit", f"t-{queue}", "hi", *args], tmp_path)
        assert (done.returncode, done.stdout) == (3, ""), done.stderr
        assert done.stderr.startswith(f"agent-core submit: session t-{queue}: no answer within --timeout 1 s")
        assert done.stderr.count("\n") == 1, done.stderr
