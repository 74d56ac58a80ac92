"""Serving an app on a loopback port of the test's event loop, and the Node clients of other implementations."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
import uvicorn

NODE_DIR = Path(__file__).resolve().parent / "node"


@asynccontextmanager
async def serving(app: Any, *, lifespan: str = "off") -> AsyncIterator[str]:
    """``app`` on 127.0.0.1 (a free port); yields its base URL. The socket listens before the server starts, so a
    client's first connection waits in the backlog instead of failing. ``lifespan="on"`` for an app that starts
    things in its lifespan (the MCP SDK's session manager)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan))
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: server.serve(sockets=[sock]))
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            server.should_exit = True


def node_clients() -> Path:
    """The directory of the Node clients, their packages installed from the lock file when missing."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: install Node.js 20 (the protocol conformance tests run official JS clients)")
    if (
        not (NODE_DIR / "node_modules" / "@ag-ui" / "client").exists()
        or not (NODE_DIR / "node_modules" / "@a2a-js" / "sdk").exists()
    ):
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci in {NODE_DIR} failed:\n{done.stderr[-2000:]}")
    return NODE_DIR


class NodeScript:
    """A Node script of ``tests/protocols/node`` run as a process: JSON lines out, lines in."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._buffer = b""

    async def line(self) -> Any:
        """The next JSON line the script prints (fails the test with its stderr if it ends first)."""
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            try:
                chunk = await self.process.stdout.receive()
            except anyio.EndOfStream:
                stderr = b""
                if self.process.stderr is not None:
                    async for part in self.process.stderr:
                        stderr += part
                await self.process.wait()
                pytest.fail(
                    f"the Node client ended ({self.process.returncode}) before its next line:\n{stderr.decode()}"
                )
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    async def send(self, text: str) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(text.encode() + b"\n")


@asynccontextmanager
async def node_script(name: str, *args: str) -> AsyncIterator[NodeScript]:
    """Run ``node <name> <args>`` in the clients' directory; it is killed if still running when the block ends."""
    directory = node_clients()
    async with await anyio.open_process(["node", name, *args], cwd=directory) as process:
        try:
            yield NodeScript(process)
        finally:
            if process.returncode is None:
                process.kill()
