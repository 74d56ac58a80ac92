"""Back-pressure: a producer that sends faster than the store commits is held to ``max_backlog`` inputs
waiting (``Backpressure`` from a plain send, a wait from ``wait_for_room``), continues once the store
catches up, and loses nothing."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_core import UserMessageReceived, decode_input
from effects import Backpressure, Session, SqliteStore, StoredInput, open_session
from effects.testing import ManualClock, ScriptedModel, SequentialIds, say

pytestmark = pytest.mark.anyio

BOUND = 10


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class HeldStore:
    """A real :class:`SqliteStore` whose writes wait, not yet committed, until :meth:`release`."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._held: list[tuple[str, Sequence[StoredInput], dict[str, Any], Future[None]]] | None = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def submit(self, session_id: str, records: Sequence[StoredInput], **options: Any) -> Future[None]:
        with self._lock:
            if self._held is not None:
                done: Future[None] = Future()
                self._held.append((session_id, records, options, done))
                return done
        return self.store.submit(session_id, records, **options)

    def release(self) -> None:
        """Commit what waits, in order, and every write from now on."""
        with self._lock:
            held, self._held = self._held or [], None
        for session_id, records, options, done in held:
            self.store.submit(session_id, records, **options).add_done_callback(_pass_on(done))


def _pass_on(done: Future[None]) -> Any:
    def copy(committed: Future[None]) -> None:
        error = committed.exception()
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    return copy


def _messages(store: SqliteStore) -> list[str]:
    inputs = (decode_input(record.data, format="msgpack") for record in store.read("s"))
    return [inp.content for inp in inputs if isinstance(inp, UserMessageReceived)]


def _fill(session: Session) -> int:
    """Send until the session refuses (or 10 times the bound); returns how many it took."""
    sent = 0
    while sent < 10 * BOUND:
        try:
            session.send(f"early {sent}")
        except Backpressure:
            return sent
        sent += 1
    return sent


async def test_a_producer_is_held_to_the_bound_while_the_store_is_behind_and_nothing_is_lost(tmp_path: Path) -> None:
    store = HeldStore(SqliteStore(tmp_path / "agent.db"))
    model = ScriptedModel(lambda context: say("noted"))
    backlogs: list[int] = []
    sent_late = 0

    async def producer(session: Session) -> None:
        nonlocal sent_late
        for n in range(3 * BOUND):
            await session.wait_for_room()
            session.send(f"late {n}")
            backlogs.append(session.machine.backlog())
            sent_late += 1

    clock, ids = ManualClock(1_767_225_600_000), SequentialIds()
    async with open_session(store, "s", model, clock=clock, ids=ids, max_backlog=BOUND) as session:  # type: ignore[arg-type]
        try:
            await anyio.wait_all_tasks_blocked()  # session-started is being committed (held)
            assert session.machine.backlog() == 1
            assert _fill(session) == BOUND - 1  # before: every send was queued, however far behind the store was
            assert session.machine.backlog() == BOUND
            with pytest.raises(Backpressure) as refused:
                session.send("one too many")
            assert str(refused.value) == (
                "the machine holds 10 inputs not yet applied and durable, its bound (max_backlog=10); the input was "
                "not queued: the store is behind the producer. Await wait_for_room() on the session or machine "
                "before dispatching more, or raise max_backlog"
            )
            assert (refused.value.backlog, refused.value.limit) == (BOUND, BOUND)
            async with anyio.create_task_group() as tg:
                tg.start_soon(producer, session)
                await anyio.wait_all_tasks_blocked()
                assert sent_late == 0  # it waits for room
                store.release()
            with anyio.fail_after(10):
                await session.turn_done()
            assert session.state.turn is None
        finally:
            store.release()  # a failed assertion must not leave the final commit waiting forever

    assert sent_late == 3 * BOUND
    assert max(backlogs) <= BOUND
    assert _messages(store.store) == [f"early {n}" for n in range(BOUND - 1)] + [f"late {n}" for n in range(3 * BOUND)]
    store.store.close()
