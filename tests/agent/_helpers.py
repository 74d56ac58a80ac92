"""Shared by the scenario tests: an agent on a manual clock, and a recorder of what the machine did."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    Rejection,
    ToolResult,
    check_invariants,
    replay,
    state_hash,
    tag_of,
)
from effects import (
    Agent,
    EffectCanceled,
    EffectStarted,
    InputReceived,
    InputRejected,
    MachineEvent,
    Session,
    StateUpdated,
    TextDelta,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds

START = 1_700_000_000_000


def make_agent(
    script: Sequence[Any] | Callable[..., Any] | ScriptedModel, tools: Iterable[Callable[..., Any]] = (), **config: Any
) -> tuple[Agent, ScriptedModel, ManualClock]:
    """An agent with a scripted model, a manual clock at ``START`` and sequential ids.

    The turn deadline is off unless ``max_turn_ms`` is given: tests here list effects and the clock's
    sleepers; ``test_turn_deadline.py`` runs the default."""
    model = script if isinstance(script, ScriptedModel) else ScriptedModel(script)
    clock = ManualClock(START)
    config_struct = AgentConfig(**{"max_turn_ms": None, **config})
    agent = Agent(model, tools=tools, config=config_struct, clock=clock, ids=SequentialIds(), session_id="s1")
    return agent, model, clock


class Recorder:
    """Subscribes to a session and keeps the accepted inputs, the published states, rejections and events."""

    def __init__(self, session: Session) -> None:
        self.inputs: list[AgentInput] = []
        self.states: list[AgentState] = []
        self.rejected: list[tuple[AgentInput, Rejection]] = []
        self.events: list[MachineEvent] = []
        self.deltas: list[TextDelta] = []
        self.check: Callable[[AgentState], None] = check_invariants  # raising here fails the test
        session.subscribe(self)

    def __call__(self, event: MachineEvent) -> None:
        self.events.append(event)
        if isinstance(event, InputReceived):
            self.inputs.append(event.input)
        elif isinstance(event, StateUpdated):
            self.check(event.state)
            self.states.append(event.state)
        elif isinstance(event, InputRejected):
            self.rejected.append((event.input, event.rejection))
        elif isinstance(event, TextDelta):
            self.deltas.append(event)

    def tags(self) -> list[str]:
        """The tags of the accepted inputs, in order."""
        return [tag_of(inp) for inp in self.inputs]

    def started(self) -> list[str]:
        """Keys of the effects started, in order."""
        return [e.key for e in self.events if isinstance(e, EffectStarted)]

    def canceled(self) -> list[str]:
        """Keys of the effects cancelled, in order."""
        return [e.key for e in self.events if isinstance(e, EffectCanceled)]

    def assert_replays_to(self, state: AgentState) -> None:
        """Folding the recorded inputs reproduces ``state`` exactly, and every published state was valid."""
        assert not self.rejected, self.rejected
        folded = replay(self.inputs)
        assert folded == state
        assert state_hash(folded) == state_hash(state)


def results(state: AgentState) -> dict[str, ToolResult | None]:
    """Tool call id -> result, in request order."""
    log = state.tool_call_log
    return {log[i]: state.tool_calls[log[i]].result for i in range(len(log))}


def texts(state: AgentState) -> list[tuple[str, str]]:
    """(role, content) of every message, in order."""
    return [(m.role, m.content) for m in (state.messages[i] for i in range(len(state.messages)))]
