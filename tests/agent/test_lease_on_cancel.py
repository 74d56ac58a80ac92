"""A session cancelled while it takes its lease gives the lease back: the next writer opens the session at once."""

from __future__ import annotations

import asyncio
import threading

import anyio
import pytest

from effects import Lease, MemoryStore, open_session
from effects.testing import ScriptedModel, say


class SlowLeases(MemoryStore):
    """A store whose first lease is taken only once ``go`` is set; ``released`` is set as a lease is given back."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.go, self.released = threading.Event(), threading.Event(), threading.Event()

    def acquire_lease(self, session_id: str, **kwargs: object) -> Lease:
        self.entered.set()
        self.go.wait(10)
        return super().acquire_lease(session_id, **kwargs)  # type: ignore[arg-type]

    def release_lease(self, lease: Lease) -> None:
        super().release_lease(lease)
        self.released.set()


def test_a_session_cancelled_while_it_takes_its_lease_gives_the_lease_back() -> None:
    async def main() -> None:
        store = SlowLeases()

        async def opening() -> None:
            async with open_session(store, "s", ScriptedModel([say("x")])):
                pytest.fail("the session opened although its task was cancelled")  # pragma: no cover

        task = asyncio.ensure_future(opening())
        await anyio.to_thread.run_sync(store.entered.wait)
        task.cancel()  # as a runner cancels an effect: the task's own cancel, not a cancel scope
        with pytest.raises(asyncio.CancelledError):
            await task
        store.go.set()  # the thread takes the lease now that nobody waits for it: it gives it back
        assert await anyio.to_thread.run_sync(store.released.wait, 5), "the lease was never given back"
        async with open_session(store, "s", ScriptedModel([say("x")])) as session:
            session.send("hi")
            await session.turn_done()

    anyio.run(main, backend="asyncio")
