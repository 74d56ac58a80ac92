"""The agents a worker runs sessions of: its own, and those its agent tools reach, by agent tool name.

A call of an agent tool runs as a child workflow whose session is the child
agent's: its model answers, its tools run. The workflow names that agent by
the agent tool's name (``""`` for the worker's own agent), so every agent tool
a worker reaches needs a name of its own: two agent tools with one name that
run different agents (or the same agent with other limits) are refused when
the worker is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from msgspec import json as msgjson

from agent_core import AgentConfig

from .._agent import Agent, AgentTool
from .._model import Model
from .._tools import Tool, Toolbox
from ._wire import ChildAgent

MAX_DEPTH = 8
"""How many levels of agent tools below its own agent a worker follows; deeper ones are refused when it is made."""


@dataclass(frozen=True)
class WorkerAgent:
    """One agent a worker runs sessions of: its model, its tools, its default config, the values redacted from
    what it returns, and its agent tools (whose calls run as child workflows) by name."""

    model: Model
    toolbox: Toolbox
    config: AgentConfig
    secrets: tuple[str, ...] = ()
    children: dict[str, AgentTool] = field(default_factory=dict)

    def child_agents(self) -> dict[str, ChildAgent]:
        """What the workflow is told of its agent tools (see :class:`~._wire.Loaded`)."""
        return {
            name: ChildAgent(
                msgjson.encode(tool.config).decode(),
                tool.max_depth or 0,
                # As the toolbox times a local call: the tool's own timeout, else the calling toolbox's default.
                tool.definition.timeout_ms or self.toolbox.limits.timeout_ms or 0,
            )
            for name, tool in sorted(self.children.items())
        }


def worker_agents(
    model: Model,
    tools: Iterable[Tool[..., Any] | Callable[..., Any]],
    config: AgentConfig,
    secrets: tuple[str, ...],
) -> dict[str, WorkerAgent]:
    """The worker's own agent (under ``""``) and every agent its agent tools reach (under the tool's name).

    Raises ``ValueError`` for two agent tools with one name that run different
    agents or configs, an agent with handoffs among them (not run under
    Temporal), or agent tools nested deeper than :data:`MAX_DEPTH`.
    """
    agents: dict[str, WorkerAgent] = {}
    seen: dict[str, AgentTool] = {}
    toolbox = Toolbox(tools)

    def visit(
        name: str, toolbox: Toolbox, model: Model, config: AgentConfig, secrets: tuple[str, ...], depth: int
    ) -> None:
        children = {t.name: t for t in toolbox if isinstance(t, AgentTool) and isinstance(t.agent, Agent)}
        agents[name] = WorkerAgent(model, toolbox, config, secrets, children)
        for tool in children.values():
            known = seen.get(tool.name)
            if known is not None:
                if known.agent is not tool.agent or known.config != tool.config or known.max_depth != tool.max_depth:
                    raise ValueError(
                        f"two agent tools named {tool.name!r} run different agents (or the same agent with other "
                        "limits); a worker tells the agents of its child sessions apart by their tool's name: "
                        "expected one name for each agent tool"
                    )
                continue
            child = tool.agent
            assert isinstance(child, Agent)
            if child.handoffs:
                raise ValueError(
                    f"agent tool {tool.name!r}: its agent hands off to other agents, which sessions run under "
                    "Temporal do not do yet; expected an agent without handoffs"
                )
            if depth >= MAX_DEPTH:
                raise ValueError(
                    f"agent tool {tool.name!r} is {depth + 1} levels of agent tools below the worker's agent; "
                    f"a worker follows at most {MAX_DEPTH}"
                )
            seen[tool.name] = tool
            visit(tool.name, child.toolbox, child.model, child.config, (*secrets, *child.secrets), depth + 1)

    visit("", toolbox, model, config, secrets, 0)
    return agents
