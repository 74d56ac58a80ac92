"""Whole sessions: input sequences generated step by step from the state they build."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from msgspec.structs import replace

from .._config import AgentConfig, ToolDefinition
from .._errors import InvalidInput
from .._inputs import AgentInput
from .._reducer import transition
from .._state import AgentState, initial_state
from ._invalid import draw_invalid
from ._kinds import session_started
from ._next import draw_next
from ._values import EPOCH_MS, agent_configs, field, ids, tool_lists
from ._workflows import workflows


def sessions(
    *,
    config: AgentConfig | SearchStrategy[AgentConfig] | None = None,
    tools: tuple[ToolDefinition, ...] | SearchStrategy[tuple[ToolDefinition, ...]] | None = None,
    min_steps: int = 0,
    max_steps: int = 30,
    invalid: bool = False,
    workflow: bool = False,
    rules: tuple[str, ...] = (),
) -> SearchStrategy[list[AgentInput]]:
    """Input sequences of a session: ``session-started`` first, then ``min_steps`` to
    ``max_steps`` more, each drawn with :func:`next_input` from the state the previous
    accepted inputs built.

    With ``invalid=False`` every input is accepted in order, so ``replay(inputs)``
    succeeds. With ``invalid=True`` about one step in eight is instead drawn from
    :func:`invalid_input` (and must be refused); the others are accepted by the state
    folded from the accepted inputs before them; :func:`fold` skips the refused ones.
    ``config`` and ``tools`` fix the session's configuration and tools, or draw them
    from a strategy (default: :func:`agent_configs`, and :func:`tool_lists` of at
    least one tool). With ``workflow=True`` the session carries a workflow drawn by
    :func:`workflows` over its tools; ``rules`` names the registered rules it lists
    (the kit's :data:`VERDICT_RULE` makes drawn calls meet every verdict).
    """

    firsts = session_started(
        timestamp=st.integers(EPOCH_MS, EPOCH_MS + 10**9),
        session_id=ids(),
        config=field(config, agent_configs()),
        tools=field(tools, tool_lists(min_size=1)),
    )

    @st.composite
    def build(draw: st.DrawFn) -> list[AgentInput]:
        first = draw(firsts)
        if workflow or rules:
            drawn_workflow = draw(workflows(first.tools)) if workflow else None
            config = replace(first.config, workflow=drawn_workflow, rules=rules)
            if workflow:  # a workflow names the tools of one agent: no handoffs beside it
                config = replace(config, agent_name="", handoffs=(), agents=())
            first = replace(first, config=config)
        state = transition(initial_state(), first)
        drawn: list[AgentInput] = [first]
        for _ in range(draw(st.integers(min_steps, max_steps))):
            # integers(0, 7) shrinks towards 0, so a shrunk example keeps as few invalid steps as it can.
            if invalid and draw(st.integers(0, 7)) == 7:
                drawn.append(draw_invalid(draw, state))
                continue
            inp = draw_next(draw, state)
            state = transition(state, inp)
            drawn.append(inp)
        return drawn

    return build()


def fold(inputs: list[AgentInput], state: AgentState | None = None) -> tuple[AgentState, list[AgentInput]]:
    """Fold ``inputs`` skipping those the state refuses: the final state and the accepted inputs."""
    current = initial_state() if state is None else state
    accepted: list[AgentInput] = []
    for inp in inputs:
        try:
            current = transition(current, inp)
        except InvalidInput:
            continue
        accepted.append(inp)
    return current, accepted
