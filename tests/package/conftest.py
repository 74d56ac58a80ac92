"""The package as a user gets it: the sdist and the wheel built from this tree, the wheel installed with only the
``temporal`` extra into a fresh venv. ``.ci/package`` builds them once and names them (``AGENT_CORE_DIST``,
``AGENT_CORE_VENV``); without those, the first test builds them here (about a minute, from the package index)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from temporal_server import NOT_FOUND, TemporalServer, binary

ROOT = Path(__file__).resolve().parents[2]


class Installed(NamedTuple):
    dist: Path
    venv: Path

    @property
    def wheel(self) -> Path:
        [wheel] = self.dist.glob("agent_core-*.whl")
        return wheel

    @property
    def sdist(self) -> Path:
        [sdist] = self.dist.glob("agent_core-*.tar.gz")
        return sdist

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    given = os.environ.get("AGENT_CORE_DIST"), os.environ.get("AGENT_CORE_VENV")
    if all(given):
        return Installed(Path(given[0] or ""), Path(given[1] or ""))
    work = tmp_path_factory.mktemp("package")
    build = [sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, timeout=120)
    made = Installed(work / "dist", work / "venv")
    install = [made.bin("pip"), "install", "-q", f"{made.wheel}[temporal]"]
    subprocess.run(install, check=True, capture_output=True, timeout=600)
    return made


@pytest.fixture(scope="session")
def temporal_server() -> Iterator[TemporalServer]:
    """The dev server (as ``tests/temporal`` starts it), for ``submit`` from the installed package."""
    found = binary()
    if found is None:
        pytest.fail(NOT_FOUND)
    server = TemporalServer(found)
    try:
        asyncio.run(server.ready())
        yield server
    finally:
        server.stop()
