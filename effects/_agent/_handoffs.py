"""The agents of a session with handoffs: found from the starting agent, checked, written into its config.

``Agent(..., handoffs=[...])`` names the agents it may hand the conversation
to, as :class:`~effects.Agent` objects or by name (an agent reached another
way, such as the starting agent itself). Every agent reached from the starting
one through handoffs is part of the session: its name, instructions, tools,
model and handoffs are checked here, before the session starts, and written
into ``session-started`` (``config.agent_name``, ``handoffs``, ``agents``), so
the log says which agents exist. Their models and context filters stay here:
the runtime asks the active agent's model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import msgspec

from agent_core import AgentConfig, AgentProfile, LlmContext

from .._model import Model
from .._money import model_name
from .._tools import Tool, Toolbox

ContextFilter = Callable[[LlmContext], LlmContext]
"""What an agent's model calls send, made from what the state projects (``llm_context``); applied in the effect
that calls the model, so nothing of it enters the log."""


class Agent(Protocol):
    """What this module reads of an :class:`~effects.Agent` (a protocol: the Agent's module imports this one)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def handoffs(self) -> tuple[Agent | str, ...]: ...
    @property
    def handoff_context(self) -> ContextFilter | None: ...
    @property
    def model(self) -> Model: ...
    @property
    def toolbox(self) -> Toolbox: ...
    @property
    def config(self) -> AgentConfig: ...


class Speaker(NamedTuple):
    """What answers while an agent is the active one: its model, and the filter of what it is sent."""

    model: Model
    context_filter: ContextFilter | None


class HandoffSetup(NamedTuple):
    """The session's agents: the handoff fields of its config, the tools of every agent in one toolbox (each
    agent is offered only its own), and the speaker of each agent by name."""

    agent_name: str
    handoffs: tuple[str, ...]
    agents: tuple[AgentProfile, ...]
    toolbox: Toolbox
    speakers: dict[str, Speaker]

    def config(self, config: AgentConfig) -> AgentConfig:
        """``config`` with the handoff fields of this setup."""
        return msgspec.structs.replace(config, agent_name=self.agent_name, handoffs=self.handoffs, agents=self.agents)


def _names(agent: Agent) -> tuple[str, ...]:
    return tuple(target if isinstance(target, str) else target.name for target in agent.handoffs)


def _reach(home: Agent) -> list[Agent]:
    """The starting agent and every agent its handoffs reach (given as objects), in the order they are found."""
    found: list[Agent] = [home]
    at = 0
    while at < len(found):
        for target in found[at].handoffs:
            if not isinstance(target, str) and all(target is not seen for seen in found):
                found.append(target)
        at += 1
    return found


def handoff_setup(home: Agent) -> HandoffSetup | None:
    """The setup of a session of ``home``, ``None`` when it hands off to nobody. ``ValueError``, naming the agents
    involved, for an agent without a name, two agents of one name, a handoff to an agent not declared, or two
    agents with different tools of one name."""
    if not home.handoffs:
        return None
    agents = _reach(home)
    unnamed = [agent for agent in agents if not agent.name]
    if unnamed:
        raise ValueError(
            "agents that hand off or receive handoffs need names; expected Agent(..., name='...') for "
            + ", ".join(_describe(agent, home) for agent in unnamed)
        )
    by_name: dict[str, Agent] = {}
    for agent in agents:
        other = by_name.setdefault(agent.name, agent)
        if other is not agent:
            raise ValueError(f"two different agents are named {agent.name!r}; expected one name per agent")
    for agent in agents:
        for target in _names(agent):
            if target not in by_name:
                raise ValueError(
                    f"agent {agent.name!r} hands off to {target!r}, which is not declared; declared agents: "
                    f"{', '.join(map(repr, by_name))} (pass the Agent itself in handoffs=[...], or the name of one "
                    "of these)"
                )
            if target == agent.name:
                raise ValueError(f"agent {agent.name!r} hands off to itself; expected another agent")
    return HandoffSetup(
        agent_name=home.name,
        handoffs=_names(home),
        agents=tuple(_profile(agent) for agent in agents[1:]),
        toolbox=_all_tools(home, agents),
        speakers={agent.name: Speaker(agent.model, agent.handoff_context) for agent in agents},
    )


def _describe(agent: Agent, home: Agent) -> str:
    return "the starting agent" if agent is home else f"the agent of model {model_name(agent.model) or agent.model!r}"


def _profile(agent: Agent) -> AgentProfile:
    return AgentProfile(
        name=agent.name,
        description=agent.description,
        system_prompt=agent.config.system_prompt,
        tools=agent.toolbox.definitions(),
        handoffs=_names(agent),
        model=model_name(agent.model) or type(agent.model).__name__,
    )


def _all_tools(home: Agent, agents: Sequence[Agent]) -> Toolbox:
    """One toolbox with the tools of every agent, with the starting agent's limits; a name two agents use for
    different tools is refused (a call is run by name)."""
    tools: dict[str, tuple[Tool[..., Any], str]] = {}
    for agent in agents:
        for item in agent.toolbox:
            known = tools.setdefault(item.name, (item, agent.name))
            if known[0] is not item:
                raise ValueError(
                    f"agents {known[1]!r} and {agent.name!r} both have a tool named {item.name!r}, and they differ "
                    f"({known[0]!r} and {item!r}); expected one tool per name across the agents of a session"
                )
    return Toolbox((item for item, _ in tools.values()), limits=home.toolbox.limits)


def missing_agents(config: AgentConfig, setup: HandoffSetup | None) -> list[str]:
    """The agents a logged config names that ``setup`` (this process's agents) lacks: a resumed session needs
    every agent its log may make active."""
    logged = [config.agent_name, *(p.name for p in config.agents)] if config.agents or config.handoffs else []
    known = setup.speakers if setup is not None else {}
    return [name for name in logged if name and name not in known]
