"""Agents that call each other as tools: a cycle among them runs forever unless one of its tools has a depth limit.

Checked when a session starts (``Agent.running``), over the agents its tools
reach (:class:`AgentTool`'s ``agent``), so that the message names the tools of the cycle.
"""

from __future__ import annotations

from typing import Any

from ._agent_tool import AgentTool


def _agent_tools(agent: Any) -> list[AgentTool]:
    return [t for t in agent.toolbox if isinstance(t, AgentTool) and t.agent is not None]


def unbounded_cycle(start: Any) -> str | None:
    """Why a session of the agent ``start`` cannot start: a cycle of agent tools reachable from it, none of them
    with a ``max_depth``, as a message naming the tools along it (``None`` when there is none)."""
    agents: list[Any] = []  # the agents on the current path, and the tools between them
    tools: list[AgentTool] = []
    done: set[int] = set()

    def visit(agent: Any) -> str | None:
        agents.append(agent)
        for tool in _agent_tools(agent):
            at = next((i for i, a in enumerate(agents) if a is tool.agent), None)
            if at is not None:
                cycle = [*tools[at:], tool]
                if all(t.max_depth is None for t in cycle):
                    steps = " -> ".join(f"agent tool {t.name!r}" for t in cycle)
                    return (
                        f"agents call each other as tools without a depth limit: {steps} -> {cycle[0].name!r} "
                        "again; expected as_tool(..., max_depth=N) on one of these tools"
                    )
                continue
            if id(tool.agent) in done:
                continue
            tools.append(tool)
            found = visit(tool.agent)
            tools.pop()
            if found is not None:
                return found
        agents.pop()
        done.add(id(agent))
        return None

    return visit(start)
