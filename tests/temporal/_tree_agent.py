"""A tree of agents the Temporal tests run (``--agent temporal._tree_agent:agent``, with ``tests`` on the path).

The planner's user message is a number ``n``: its model calls the agent tool
``research`` twice in parallel, with ``n`` and ``n + 1``, then answers with
both answers. Each researcher runs rounds of ``double`` (idempotent) and ``record`` (not
idempotent) in parallel, as the failover scenario's agent does (see
``_failover_agent``), then answers with the doubles: one round for an even
number, two for an odd one, so the two children of a planner end at different
times. Its ``record`` notes each run in the runs file when it *starts*, so a run
cut short by a killed worker and run again shows twice.
"""

from __future__ import annotations

import asyncio
import json
import os

from agent_core import AgentConfig, ContextMessage, ContextToolResult, LlmContext
from effects import Agent, ModelReply, ModelToolCall, tool
from effects.testing import ScriptedModel, say

from ._failover_agent import TOOL_SECONDS, double, doubling


@tool
async def record(key: str) -> str:
    """Note that ``key`` was recorded: one line per run in the runs file, written as the run starts."""
    path = os.environ.get("AGENT_CORE_RUNS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as runs:
            runs.write(key + "\n")
    await asyncio.sleep(TOOL_SECONDS)
    return "recorded"


def plan(context: LlmContext) -> ModelReply:
    """Ask two researchers in parallel, then answer with what they said."""
    asked = next(e.content for e in context.entries if isinstance(e, ContextMessage) and e.role == "user")
    results = [e.content for e in context.entries if isinstance(e, ContextToolResult) and e.name == "research"]
    if results:
        return say(f"{asked}: " + " | ".join(results))
    return ModelReply(
        tool_calls=tuple(
            ModelToolCall(id=f"research-{k}", name="research", arguments=json.dumps({"task": str(int(asked) + k)}))
            for k in range(2)
        )
    )


research = doubling(lambda asked: 1 + int(asked) % 2)
"""The next round's two calls, or the answer once its rounds are done (one for even numbers, two for odd)."""


def researcher() -> Agent:
    """The child agent."""
    return Agent(
        ScriptedModel(research, keep_calls=False), tools=[double, record], config=AgentConfig(max_tool_calls=20)
    )


def planner(child: Agent) -> Agent:
    """The parent agent, its researcher offered as the agent tool ``research``."""
    research = child.as_tool("research", "Ask a researcher about a number.")
    return Agent(ScriptedModel(plan, keep_calls=False), tools=[research], config=AgentConfig(max_tool_calls=40))


agent = planner(researcher())
"""What each worker runs."""
