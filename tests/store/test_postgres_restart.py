"""PostgreSQL restarted while sessions run: they wait for the server within the store's reconnect window and go on.

The sessions' tools finish while the server is down: their commits wait on the
writer's reconnecting connection and land once the server is back; nothing is
lost, nothing is written twice, each session completes its turn.
"""

from __future__ import annotations

import anyio
import pytest
from postgres_server import PostgresServer  # type: ignore[import-not-found]

from effects import PostgresStore, Session, StoreUnavailable, open_session, replay_session, tool
from effects.testing import ScriptedModel, call_tools, say

SESSIONS = 4


async def run_through_a_restart(server: PostgresServer, store: PostgresStore) -> list[BaseException]:
    """Run ``SESSIONS`` sessions whose tool returns while the server is stopped; the errors that stopped them."""
    down = anyio.Event()
    started = 0
    all_started = anyio.Event()

    @tool
    async def lookup(q: str) -> str:
        """Look something up (returns once the server is down)."""
        nonlocal started
        started += 1
        if started == SESSIONS:
            all_started.set()
        await down.wait()
        return f"found {q}"

    errors: list[BaseException] = []

    async def one(n: int) -> None:
        model = ScriptedModel([call_tools(("lookup", {"q": f"s{n}"}, f"c{n}")), say(f"answer {n}")])
        try:
            async with open_session(store, f"s{n}", model, tools=[lookup]) as session:
                session.send("look it up")
                await finished(session)
        except Exception as error:
            errors.append(error)

    async with anyio.create_task_group() as group:
        for n in range(SESSIONS):
            group.start_soon(one, n)
        await all_started.wait()  # every session committed its tool call's start
        await anyio.to_thread.run_sync(server.stop)
        down.set()  # the tools return: their commits meet a stopped server
        await anyio.to_thread.run_sync(server.start)
    return errors


async def finished(session: Session) -> None:
    state = await session.turn_done()
    assert state.messages[-1].content.startswith("answer")


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_sessions_ride_over_a_server_restart(postgres_server: PostgresServer, postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    try:
        assert await run_through_a_restart(postgres_server, store) == []
        for n in range(SESSIONS):
            report = replay_session(store, f"s{n}", verify=True)
            assert [m.content for m in report.state.messages] == ["look it up", f"answer {n}"]
            assert [c.result.content for c in report.state.tool_calls.values()] == [f"found s{n}"]  # type: ignore[union-attr]
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_without_a_reconnect_window_the_sessions_stop_with_store_unavailable(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    store = PostgresStore(postgres_dsn, reconnect_for=0)
    try:
        errors = await run_through_a_restart(postgres_server, store)
    finally:
        store.close()
    assert errors and all(isinstance(e, StoreUnavailable) or isinstance(e.__cause__, StoreUnavailable) for e in errors)
