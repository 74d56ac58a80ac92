"""Driving the viewer in a real browser: Debian's Chromium through Playwright (never a downloaded browser), and
the viewer served on a loopback port of the test's own event loop."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import uvicorn
from playwright.async_api import Browser, Page, async_playwright

from effects import EventStore, create_app

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("AGENT_CORE_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))


@asynccontextmanager
async def browser() -> AsyncIterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@asynccontextmanager
async def serving(store: EventStore) -> AsyncIterator[str]:
    """The viewer on a loopback port of this event loop. The socket listens before the server starts,
    so the browser's first connection waits in the backlog instead of failing."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(create_app(store), log_level="warning", lifespan="off"))
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: server.serve(sockets=[sock]))
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
        finally:
            server.should_exit = True


async def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / name), full_page=True)
