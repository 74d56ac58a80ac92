"""A turn leaves nothing for the cycle collector: every object it made is freed when its last reference goes.

With thousands of sessions in one process, an object that only the cycle
collector can free is promoted while the other sessions run, and is freed
only by a full collection of the whole heap. A turn here runs a model call,
two tool calls that wait for their ``tool-call-started`` to be applied, an
answer, and the turn's deadline (a timer, cancelled as the turn ends): the
kinds of effect runs a session makes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from agent_core import LlmContext, Usage
from effects import Agent, ModelReply, tool
from effects.testing import ScriptedModel, call_tools, say

pytestmark = pytest.mark.anyio


@tool
async def lookup(i: int) -> int:
    """An instant tool."""
    return i


def turns() -> ScriptedModel:
    usage = Usage(input_tokens=10, output_tokens=2)
    calls, answer = call_tools(("lookup", {"i": 1}), ("lookup", {"i": 2}), usage=usage), say("done", usage=usage)
    count = [0]

    def script(_: LlmContext) -> ModelReply:
        count[0] += 1
        return answer if count[0] % 2 == 0 else calls

    return ScriptedModel(script, estimate_usage=False, keep_calls=False)


@pytest.fixture
def saving_garbage() -> Iterator[list[object]]:
    """The collector off, and what it finds unreachable kept in the list it yields (and emptied after)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


async def test_a_turn_leaves_no_cyclic_garbage(saving_garbage: list[object]) -> None:
    async with Agent(turns(), tools=[lookup]).running() as session:
        session.send("warm-up")  # what a session makes once (hosts, caches) is not a turn's
        await session.turn_done()
        gc.collect()
        saving_garbage.clear()
        for n in range(5):
            session.send(f"question {n}")
            await session.turn_done()
        outcome = session.state.last_outcome
        assert outcome is not None and outcome.kind == "completed"
        gc.collect()
        # Only this library's objects are looked at: the test runner's own (pytest, anyio's plugin) are not a turn's.
        ours = sorted({type(item).__qualname__ for item in saving_garbage if _ours(item)})
        assert ours == []


def _ours(item: object) -> bool:
    return type(item).__module__.partition(".")[0] in ("effects", "agent_core")
