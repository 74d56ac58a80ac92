"""An agent used as a tool, on each provider's wire: the child's request carries its task as the user message,
the parent's next request carries the child's answer as the call's result, and both logs replay alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from effects import Agent, SqliteStore, load_state, open_session, replay_session, tool
from effects.testing import FakeProviderServer, FakeToolCall, ManualClock

from ._providers import PROVIDERS, Provider

pytestmark = pytest.mark.anyio


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic} purr"


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_child_agent_runs_on_the_providers_wire_in_its_own_log(
    provider: Provider, server: FakeProviderServer, tmp_path: Path
) -> None:
    server.enqueue(
        provider.reply([], [FakeToolCall("call_ask", "research", ['{"task": "cats"}'])]),  # the planner asks
        provider.reply([], [FakeToolCall("call_look", "lookup", ['{"topic": "cats"}'])]),  # the child looks up
        provider.reply(["Cats purr."]),  # the child answers
        provider.reply(["They purr."]),  # the planner answers
    )
    store, clock = SqliteStore(tmp_path / "team.db"), ManualClock()
    async with provider.build(server) as model:
        research = Agent(model, tools=[lookup], clock=clock).as_tool("research", "Research a topic.")
        async with open_session(store, "plan", model, tools=[research], clock=clock) as session:
            session.send("What do cats do?")
            state = await session.turn_done()
    assert state.messages[len(state.messages) - 1].content == "They purr."
    child = replay_session(store, "plan:call_ask").state  # the child's log, alone
    assert [child.messages[i].content for i in range(len(child.messages))] == ["cats", "Cats purr."]
    assert child.tool_calls["call_look"].result.content == "cats purr"  # type: ignore[union-attr]
    assert load_state(store, "plan").tool_calls["call_ask"].result.content == "Cats purr."  # type: ignore[union-attr]
    bodies = [json.dumps(r.body) for r in server.requests]
    assert '"research"' in bodies[0] and '"lookup"' not in bodies[0]  # each agent offers its own tools
    assert '"lookup"' in bodies[1] and '"research"' not in bodies[1] and '"cats"' in bodies[1]
    assert "Cats purr." in bodies[3] and "call_ask" in bodies[3]  # the child's answer went back as the result
