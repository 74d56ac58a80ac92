"""The runner's workload, shared by the benchmarks: an instant scripted model and an instant async tool.

Each turn is four rounds of three parallel calls to ``lookup``, then an
answer; a round is one model call and what it asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_core import AgentConfig, LlmContext, Usage
from effects import Agent, ModelReply, Toolbox, ToolLimits, tool
from effects.testing import ScriptedModel, call_tools, say

ROUNDS_PER_TURN = 5  # four rounds of tool calls, then the answer


@tool
async def lookup(i: int) -> int:
    """An instant tool."""
    return i


def instant_model(on_call: Callable[[], object] | None = None) -> ScriptedModel:
    """Four rounds of three parallel calls, then an answer; no streaming delay, no usage estimate.

    ``on_call`` is called at the start of every model call (the runner marks rounds with it).
    """
    usage = Usage(input_tokens=100, output_tokens=20)
    calls = call_tools(("lookup", {"i": 1}), ("lookup", {"i": 2}), ("lookup", {"i": 3}), usage=usage)
    answer = say("done", usage=usage)
    count = [0]

    def script(context: LlmContext) -> ModelReply:
        if on_call is not None:
            on_call()
        count[0] += 1
        return answer if count[0] % ROUNDS_PER_TURN == 0 else calls

    return ScriptedModel(script, estimate_usage=False, keep_calls=False)


def new_agent(on_call: Callable[[], object] | None = None, *, timeouts: bool = True) -> Agent:
    """An agent on :func:`instant_model` and :func:`lookup`.

    ``timeouts=False`` runs every call without a deadline (``model_timeout_ms=None``,
    ``ToolLimits(timeout_ms=None)``): what the default timeouts cost a round.
    """
    # Stuck detection would stop the same three calls repeated; budgets stay off.
    config = AgentConfig(max_identical_tool_calls=1_000_000, stuck_window=0)
    if timeouts:
        return Agent(instant_model(on_call), tools=[lookup], config=config)
    tools = Toolbox([lookup], limits=ToolLimits(timeout_ms=None))
    return Agent(instant_model(on_call), tools=tools, config=config, model_timeout_ms=None)
