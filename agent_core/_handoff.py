"""Handoffs: which agent of the session is active, and what a model call sends and offers because of it.

A session may declare several agents (``AgentConfig.agent_name``, ``handoffs``,
``agents``); one of them is active at a time (``AgentState.agent``, empty for
the agent the session started with). The active agent's instructions are the
system prompt, its tools are the ones offered and run, and each agent it may
hand over to is offered as a ``transfer_to_<name>`` tool, which the runner turns
into a ``handed-off`` input instead of running it.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ._config import AgentConfig, AgentProfile, ToolDefinition
from ._state import AgentState
from ._toolset import ToolSet

TRANSFER_PREFIX = "transfer_to_"
"""The name of the tool that hands the conversation to agent ``x`` is ``transfer_to_x``."""

AGENT_NAME = re.compile(r"[A-Za-z0-9_-]{1,52}")
"""What an agent's name may be: its transfer tool's name must be a valid tool name for every provider (64 characters
of letters, digits, ``_`` and ``-``)."""

_TRANSFER_PARAMETERS = json.dumps(
    {
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "Why the conversation is handed over."}},
    },
    separators=(",", ":"),
)


def transfer_tool_name(agent: str) -> str:
    """The name of the tool that hands the conversation to ``agent``."""
    return TRANSFER_PREFIX + agent


def active_agent(state: AgentState) -> str:
    """The name of the session's active agent (``config.agent_name`` until a handoff; may be empty)."""
    return state.agent or state.config.agent_name


def _profile(config: AgentConfig, name: str) -> AgentProfile | None:
    return next((p for p in config.agents if p.name == name), None)


@lru_cache(maxsize=64)
def _toolset(tools: tuple[ToolDefinition, ...]) -> ToolSet:
    # A profile's tools as a ToolSet, built once per profile rather than at every transition.
    return ToolSet(tools)


def active_tools(state: AgentState) -> ToolSet:
    """The tools of the active agent: the session's tools, or the tools of the agent it was handed to."""
    if not state.agent:
        return state.tools
    profile = _profile(state.config, state.agent)
    return _toolset(profile.tools) if profile is not None else ToolSet()


def active_prompt(state: AgentState) -> str:
    """The active agent's instructions: the system prompt of the model calls it makes."""
    if not state.agent:
        return state.config.system_prompt
    profile = _profile(state.config, state.agent)
    return profile.system_prompt if profile is not None else ""


def handoff_targets(state: AgentState) -> tuple[str, ...]:
    """The agents the active agent may hand the conversation to."""
    if not state.agent:
        return state.config.handoffs
    profile = _profile(state.config, state.agent)
    return profile.handoffs if profile is not None else ()


def transfer_tools(state: AgentState) -> tuple[ToolDefinition, ...]:
    """The ``transfer_to_<name>`` tools the active agent's model calls are offered, one per handoff target."""
    targets = handoff_targets(state)
    if not targets:
        return ()
    config = state.config
    return tuple(_transfer_definition(config, name) for name in targets)


def _transfer_definition(config: AgentConfig, name: str) -> ToolDefinition:
    profile = _profile(config, name)
    about = f" {profile.description}" if profile is not None and profile.description else ""
    return ToolDefinition(
        name=transfer_tool_name(name),
        description=f"Hand the conversation over to the agent {name!r}, which answers from now on.{about}",
        parameters=_TRANSFER_PARAMETERS,
    )


def handoff_problems(config: AgentConfig, tools: tuple[ToolDefinition, ...]) -> list[str]:
    """What is wrong with the session's agents, each naming the agents involved: names that are not valid or
    repeat, a handoff to an agent the config does not declare, a tool named like a transfer tool."""
    if not (config.agent_name or config.handoffs or config.agents):
        return []
    problems: list[str] = []
    names = [config.agent_name, *(p.name for p in config.agents)]
    for name in names:
        if not AGENT_NAME.fullmatch(name):
            problems.append(
                f"expected agent names of 1 to 52 letters, digits, '_' or '-' (a transfer tool's name is "
                f"transfer_to_<name>), got {name!r}"
            )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        problems.append(f"expected each agent declared once, got {', '.join(map(repr, repeated))} more than once")
    declared = set(names)
    owners = [(config.agent_name, config.handoffs, tools), *((p.name, p.handoffs, p.tools) for p in config.agents)]
    for owner, handoffs, owned in owners:
        for target in handoffs:
            if target not in declared:
                problems.append(
                    f"agent {owner!r} hands off to {target!r}, which is not declared; declared agents: "
                    f"{', '.join(map(repr, names))}"
                )
            elif target == owner:
                problems.append(f"agent {owner!r} hands off to itself; expected another agent")
        clashes = [t.name for t in owned if t.name.startswith(TRANSFER_PREFIX)]
        if clashes:
            problems.append(
                f"agent {owner!r} has a tool named {clashes[0]!r}; names starting with {TRANSFER_PREFIX!r} are the "
                "transfer tools of handoffs"
            )
    if config.workflow is not None:
        problems.append("expected a workflow or handoffs between agents, got both (a workflow names one agent's tools)")
    return problems
