"""A chat session held open on an event loop in a background thread.

The terminal stays in the main thread, so ``input()`` and Ctrl-C behave as
people expect there (Ctrl-C raises ``KeyboardInterrupt`` in the main thread,
never inside the agent's loop); the session's methods run on its loop.

The loop's thread blocks SIGINT, and so do the threads it starts (they inherit
its mask): the kernel hands a Ctrl-C to a thread that does not block it, and
one taken by another thread would not wake the main thread from its wait for
the turn, so the turn would run on uncancelled.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from effects import Session

T = TypeVar("T")


class BackgroundSession:
    """An event loop in a daemon thread that keeps ``open_session()`` entered until :meth:`close`."""

    def __init__(self, open_session: Callable[[], AbstractAsyncContextManager[Session]]) -> None:
        self._open = open_session
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="agent-core-chat", daemon=True)
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._held: Future[None] | None = None
        self.session: Session | None = None

    def start(self) -> Session:
        """Open the session on the loop; raises what opening it raised."""
        self._thread.start()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        self._held.add_done_callback(lambda _: self._ready.set())
        self._ready.wait()
        if self.session is None:
            self._held.result()  # raises the failure
            raise RuntimeError("the chat session ended before it started")
        return self.session

    def _run_loop(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX; elsewhere Ctrl-C reaches the main thread anyway
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        self._loop.run_forever()

    async def _hold(self) -> None:
        self._stop = asyncio.Event()
        async with self._open() as session:
            self.session = session
            self._ready.set()
            await self._stop.wait()

    def run(self, work: Callable[[], Coroutine[Any, Any, T]]) -> Future[T]:
        """Run ``work()`` on the loop; wait on the returned future (Ctrl-C interrupts the wait, not the work)."""
        return asyncio.run_coroutine_threadsafe(work(), self._loop)

    def call(self, action: Callable[[], object]) -> None:
        """Run ``action`` on the loop (session methods must run there) and wait for it; raises what it raised,
        so a refused message is reported at the prompt instead of being lost on the loop."""

        async def run() -> None:
            action()

        asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def close(self) -> None:
        """Leave the session (effects are cancelled, the log closed) and stop the loop."""
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._held is not None:
            self._held.result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
