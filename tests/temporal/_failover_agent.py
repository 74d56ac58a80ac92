"""The agent the failover scenario's worker processes (and ``benchmarks/workers.py``'s) run (``--agent temporal._failover_agent:agent``, with ``tests`` on the path).

The user's message is a number ``n``. For ``ROUNDS`` rounds the model calls
``double`` (idempotent: it may run again after a crash) and ``record`` (not
idempotent: each run appends a line to the file ``AGENT_CORE_RUNS_FILE``
names, so a test can count them) in parallel, then answers with the doubles. The
answer does not depend on ``record``'s result, so it is the same whether or not a
crash interrupted ``record``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable

from agent_core import AgentConfig, ContextMessage, ContextToolResult, LlmContext
from effects import Agent, ModelReply, ModelToolCall, tool
from effects.testing import ScriptedModel, say

ROUNDS = int(os.environ.get("AGENT_CORE_ROUNDS", "3"))  # benchmarks/workers.py sets 1: two model calls, two tools
# Long enough that a killed worker is caught in the middle of some calls; benchmarks/workers.py sets 0.
TOOL_SECONDS = float(os.environ.get("AGENT_CORE_TOOL_SECONDS", "0.1"))


@tool(idempotent=True)
async def double(n: int) -> int:
    """Twice ``n``."""
    await asyncio.sleep(TOOL_SECONDS)
    return 2 * n


@tool
async def record(key: str) -> str:
    """Note that ``key`` was recorded: one line per run in the runs file."""
    await asyncio.sleep(TOOL_SECONDS)
    path = os.environ.get("AGENT_CORE_RUNS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as runs:
            runs.write(key + "\n")
    return "recorded"


def doubling(rounds: Callable[[str], int]) -> Callable[[LlmContext], ModelReply]:
    """A model that runs ``rounds(message)`` rounds of ``double`` and ``record`` in parallel, then answers with
    the doubles."""

    def answer(context: LlmContext) -> ModelReply:
        asked = next(e.content for e in context.entries if isinstance(e, ContextMessage) and e.role == "user")
        doubles = [e.content for e in context.entries if isinstance(e, ContextToolResult) and e.name == "double"]
        k = len(doubles)
        if k == rounds(asked):
            return say(f"{asked}: " + ", ".join(doubles))
        n = int(asked) + k
        return ModelReply(
            tool_calls=(
                ModelToolCall(id=f"double-{k}", name="double", arguments=json.dumps({"n": n})),
                ModelToolCall(id=f"record-{k}", name="record", arguments=json.dumps({"key": f"{asked}-{k}"})),
            )
        )

    return answer


answer = doubling(lambda _: ROUNDS)
"""The next round's two calls, or the answer once ``ROUNDS`` doubles are in."""


agent = Agent(ScriptedModel(answer, keep_calls=False), tools=[double, record], config=AgentConfig(max_tool_calls=20))
"""What each worker runs."""
