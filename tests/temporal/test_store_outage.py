"""Waits that end, and a store outage that is not a crash: sessions on the real dev server, the real PostgreSQL
stopped and started again while turns are under way."""

from __future__ import annotations

import collections
import uuid
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from agent_core import Phase, ReActCancelled, ToolSuccess, UserMessageReceived, phase
from effects import PostgresStore, StoreUnavailable, replay_session
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel

from ._approving_agent import agent as approving
from ._failover_agent import ROUNDS, answer
from ._failover_agent import agent as failover

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SESSIONS = 16
OUTAGE_SECONDS = 3.0


def _tools(agent):  # type: ignore[no-untyped-def]
    return [agent.toolbox[name] for name in agent.toolbox.names()]


async def test_turn_done_returns_after_a_cancel_and_after_a_message_to_a_session_awaiting_approval(
    temporal_server, postgres_dsn: str
) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    async with session_worker(client, store, approving.model, tools=_tools(approving), task_queue=queue):
        await start_session(client, "wait-1", task_queue=queue)
        seq = await submit(client, "wait-1", UserMessageReceived(timestamp=0, message_id="u-1", content="refund"))
        assert phase(await turn_done(store, "wait-1", seq)) is Phase.AWAITING_APPROVAL
        with anyio.fail_after(20):  # a waiter for a record that never comes waits its whole bound
            seq = await submit(client, "wait-1", UserMessageReceived(timestamp=0, message_id="u-2", content="and?"))
            assert phase(await turn_done(store, "wait-1", seq)) is Phase.AWAITING_APPROVAL
            seq = await submit(client, "wait-1", ReActCancelled(timestamp=0, reason="enough"))
            state = await turn_done(store, "wait-1", seq)
    assert state.turn is None and state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert store.session("wait-1").length == seq  # it returned on the cancellation itself: nothing came after it
    store.close()


async def test_a_store_restart_ends_no_wait_and_interrupts_no_call_that_never_ran(
    temporal_server, postgres_server, postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL stopped for a few seconds while model and tool calls are in flight, waiters waiting on the same
    loop: every waiter returns the completed turn, and no call of the non-idempotent tool is interrupted (the worker
    never died, so none was running when it did)."""
    runs = tmp_path / "runs.txt"
    monkeypatch.setenv("AGENT_CORE_RUNS_FILE", str(runs))
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    queue = f"q-{uuid.uuid4().hex}"
    ids = [f"outage-{i}" for i in range(SESSIONS)]
    model = ScriptedModel(answer, keep_calls=False)
    finals: dict[str, object] = {}
    # Two workers, each with a client and a store of its own: an activity often runs where the state is not
    # cached, as on two machines.
    other = PostgresStore(postgres_dsn)
    config = failover.config
    async with (
        session_worker(client, store, model, tools=_tools(failover), config=config, task_queue=queue),
        session_worker(
            await Client.connect(temporal_server.address),
            other,
            model,
            tools=_tools(failover),
            config=config,
            task_queue=queue,
        ),
    ):

        async def session(n: int, session_id: str) -> None:
            await start_session(client, session_id, task_queue=queue)
            seq = await submit(client, session_id, UserMessageReceived(timestamp=0, message_id="u", content=str(n)))
            finals[session_id] = await turn_done(store, session_id, seq)

        with anyio.fail_after(180):
            async with anyio.create_task_group() as group:
                for n, session_id in enumerate(ids):
                    group.start_soon(session, 10 * n, session_id)
                await store.wait_for_inputs(ids[0], 4)  # the first round is under way: stop the store now
                await anyio.to_thread.run_sync(postgres_server.stop)
                await anyio.sleep(OUTAGE_SECONDS)  # the outage itself: nothing to await
                await anyio.to_thread.run_sync(postgres_server.start)
    ran = collections.Counter(runs.read_text().split())
    for n, session_id in enumerate(ids):
        final = finals[session_id]
        assert final.last_outcome is not None and final.last_outcome.kind == "completed", session_id  # type: ignore[attr-defined]
        for k in range(ROUNDS):
            result = final.tool_calls[f"record-{k}"].result  # type: ignore[attr-defined]
            assert isinstance(result, ToolSuccess), (session_id, k, result)  # not INTERRUPTED: the worker lived
            assert ran[f"{10 * n}-{k}"] == 1, (session_id, k)
        assert replay_session(store, session_id, verify=True).state == final
    store.close()
    other.close()


async def test_turn_done_gives_up_on_a_store_gone_for_longer_than_reconnect_for(
    postgres_server, postgres_dsn: str
) -> None:
    store = PostgresStore(postgres_dsn)
    store.close()
    postgres_server.stop()
    try:
        with anyio.fail_after(30), pytest.raises(StoreUnavailable) as gone:
            await turn_done(store, "nowhere", 3, reconnect_for=1)
    finally:
        postgres_server.start()
    assert "stopped waiting for new inputs of session 'nowhere': the server could not be reached for 1 s" in str(
        gone.value
    )
