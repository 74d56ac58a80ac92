"""Failover for real: three worker processes, many sessions, one worker killed with SIGKILL mid-run.

Every session completes, no committed input is lost (each log replays and
verifies, and holds every input a caller was told was accepted), the
non-idempotent tool never runs twice for one call, and every final
conversation equals the one a single process produces.
"""

from __future__ import annotations

import asyncio
import collections
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporal_server import printed, start_workers, stop_workers
from temporalio.client import Client

from agent_core import AgentState, ToolSuccess, UserMessageReceived, effects_at, phase
from effects import INTERRUPTED, Agent, PostgresStore, load_state, replay_session
from effects.temporal import start_session, submit, turn_done
from effects.testing import ScriptedModel

from ._failover_agent import ROUNDS, agent, answer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SESSIONS = 50
WORKERS = 3
AGENT = "temporal._failover_agent:agent"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs.txt"


@pytest.fixture
def workers(temporal_server, postgres_dsn: str, runs: Path) -> Iterator[tuple[str, list[subprocess.Popen[str]]]]:
    queue = f"q-{uuid.uuid4().hex}"
    env = {"AGENT_CORE_RUNS_FILE": str(runs)}
    started = start_workers(WORKERS, temporal_server.address, postgres_dsn, queue, agent=AGENT, env=env)
    try:
        yield queue, started
    finally:
        stop_workers(started)


def conversation(state: AgentState) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in state.messages]


async def single_process(n: int) -> list[tuple[str, str]]:
    """The same session in one process, without Temporal: the conversation to compare with."""
    reference = Agent(
        ScriptedModel(answer), tools=[agent.toolbox[t] for t in agent.toolbox.names()], config=agent.config
    )
    async with reference.running() as session:
        session.send(str(n))
        return conversation(await session.turn_done())


async def settled(
    client: Client, store: PostgresStore, session_id: str, seq: int, processes: list[subprocess.Popen[str]]
) -> AgentState:
    """The session's settled state; a session still open after 90 s fails the test with what it waits for."""
    try:
        return await asyncio.wait_for(turn_done(store, session_id, seq), timeout=90)
    except TimeoutError:
        state = load_state(store, session_id)
        history = await client.get_workflow_handle(session_id).fetch_history()
        events = [event.event_type for event in history.events][-15:]
        output = "".join(printed(p)[-3000:] for p in processes[1:])
        raise AssertionError(
            f"{session_id} still open after 90 s: {len(list(store.read(session_id)))} records, effects "
            f"{sorted(effects_at(state))}, phase {phase(state).name}; last workflow events {events}; workers printed:\n{output}"
        ) from None


async def test_sessions_survive_a_killed_worker(
    temporal_server, postgres_dsn: str, workers: tuple[str, list[subprocess.Popen[str]]], runs: Path
) -> None:
    queue, processes = workers
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    ids = [f"failover-{i}" for i in range(SESSIONS)]

    async def begin(session_id: str, n: int) -> int:
        await start_session(client, session_id, task_queue=queue, heartbeat_ms=2000)
        return await submit(client, session_id, UserMessageReceived(timestamp=0, message_id="user-1", content=str(n)))

    began = time.monotonic()
    accepted = await asyncio.gather(*(begin(s, 10 * i) for i, s in enumerate(ids)))
    await turn_done(store, ids[0], accepted[0])  # some work is done, much is under way: kill a worker now
    processes[0].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    open_turns = sum(load_state(store, s).turn is not None for s in ids)
    assert open_turns > 0, "every session finished before the kill: the scenario tested nothing"

    finals = [await settled(client, store, s, seq, processes) for s, seq in zip(ids, accepted, strict=True)]
    done = time.monotonic()
    expected = await asyncio.gather(*(single_process(10 * i) for i in range(SESSIONS)))
    for session_id, seq, final, reference in zip(ids, accepted, finals, expected, strict=True):
        assert final.last_outcome is not None and final.last_outcome.kind == "completed", session_id
        assert conversation(final) == reference, session_id
        assert replay_session(store, session_id, verify=True).state == final
        assert conversation(load_state(store, session_id, seq))[0] == ("user", reference[0][1])
    ran = collections.Counter(runs.read_text().split())
    assert ran and max(ran.values()) == 1, [key for key, n in ran.items() if n > 1]
    for i, final in enumerate(finals):
        for k in range(ROUNDS):
            result = final.tool_calls[f"record-{k}"].result
            assert result is not None
            outcome = result.content if isinstance(result, ToolSuccess) else result.error
            assert (outcome, ran[f"{10 * i}-{k}"]) in {("recorded", 1), (INTERRUPTED, 0), (INTERRUPTED, 1)}
    print(
        f"{open_turns} of {SESSIONS} under way at the kill; kill at {killed - began:.1f} s, all done {done - killed:.1f} s later"
    )
    store.close()
