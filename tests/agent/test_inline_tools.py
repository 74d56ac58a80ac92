"""``@tool(inline=True)``: a pure, quick sync function called on the event loop's thread, not in a worker thread."""

from __future__ import annotations

import threading

import pytest

from agent_core import AgentConfig, ToolFailure, ToolSuccess
from effects import Agent, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

pytestmark = pytest.mark.anyio

THREADS: dict[str, int] = {}


@tool(inline=True)
def double(n: int) -> int:
    """Double a number."""
    THREADS["double"] = threading.get_ident()
    return 2 * n


@tool
def triple(n: int) -> int:
    """Triple a number."""
    THREADS["triple"] = threading.get_ident()
    return 3 * n


@tool(inline=True)
def broken(n: int) -> int:
    """Fail."""
    raise ValueError(f"cannot take {n}")


async def test_an_inline_tool_runs_on_the_loop_thread_and_a_plain_one_in_a_worker_thread() -> None:
    model = ScriptedModel([call_tools(("double", {"n": 2}), ("triple", {"n": 2}), ("broken", {"n": 1})), say("ok")])
    agent = Agent(model, tools=[double, triple, broken], clock=ManualClock(), ids=SequentialIds(), config=AgentConfig())
    async with agent.running() as session:
        session.send("go")
        state = await session.turn_done()
    results = [state.tool_calls[call_id].result for call_id in state.tool_call_log]
    assert results[:2] == [ToolSuccess(content="4"), ToolSuccess(content="6")]
    assert isinstance(results[2], ToolFailure)
    assert "ValueError: cannot take 1" in results[2].error  # a failure the model reads, as for any tool
    assert THREADS["double"] == threading.get_ident()  # before: a worker thread, like triple's
    assert THREADS["triple"] != threading.get_ident()


def test_inline_is_refused_for_an_async_tool() -> None:
    async def fetch(url: str) -> str:
        return url

    with pytest.raises(ValueError, match=r"tool 'fetch': inline=True is for plain \(def\) functions"):
        tool(inline=True)(fetch)
