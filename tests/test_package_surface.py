"""What a user of the installed package meets first: help texts that point at nothing they lack, and an
optional module without its extra naming the extra and the command that installs it from here."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from install_hint import editable_install

from effects.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def test_no_help_text_points_at_the_source_tree(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in ["", *commands]:
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"] if name else ["--help"])
        text = capsys.readouterr().out
        for inside in ("tests/", "fixtures", "benchmarks/", "examples/", ".ci/"):
            assert inside not in text, f"agent-core {name} --help names {inside!r}, which an installed user lacks"


# Each optional module imported with its dependency absent (None in sys.modules is what Python does for a
# package that is not installed), in a process of its own so nothing is imported already.
_MISSING = r"""
import json, sys
blocked, statement = sys.argv[1], sys.argv[2]
for name in blocked.split(","):
    sys.modules[name] = None
try:
    exec(statement)
except Exception as error:
    print(json.dumps([type(error).__name__, isinstance(error, ImportError), str(error)]))
else:
    print(json.dumps(None))
"""

CASES = [
    ("temporalio,temporalio.client", "import effects.temporal", "MissingExtra", "effects.temporal", "temporal"),
    ("hypothesis", "import agent_core.testing", "ImportError", "agent_core.testing", "testing"),
    (
        "starlette,starlette.applications",
        "import effects; effects.create_app(effects.MemoryStore())",
        "MissingExtra",
        "the session viewer",
        "ui",
    ),
    (
        "opentelemetry,opentelemetry.sdk",
        "from effects._observe._otel import to_otel; to_otel(None)",
        "MissingExtra",
        "OpenTelemetry export",
        "otel",
    ),
    (
        "psycopg",
        "import effects; effects.PostgresStore('postgresql://nowhere/x')",
        "StoreError",
        "PostgreSQL",
        "postgres",
    ),
]


@pytest.mark.slow  # a process per optional module
@pytest.mark.parametrize(("blocked", "statement", "kind", "what", "extra"), CASES)
def test_an_optional_module_without_its_extra_names_the_extra(
    blocked: str, statement: str, kind: str, what: str, extra: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MISSING, blocked, statement], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    raised, _, message = json.loads(done.stdout)
    assert raised == kind
    assert message.startswith(what) and f"'{extra}' extra" in message, message
    if extra == "testing":  # the pure package does not look at how it was installed: hypothesis itself
        assert message.endswith(f"install it with: {shlex.quote(sys.executable)} -m pip install 'hypothesis>=6.100'")
    else:
        assert message.endswith(f"install it with: {editable_install(extra)}"), message


def test_importing_the_package_does_not_load_trio() -> None:
    """An asyncio program never pays for trio: a fifth of a second at start, and 13,000 objects the collector
    walks at every full collection."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, effects, agent_core; print(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [m for m in loaded if m.split(".")[0] == "trio"] == []
