"""``handed-off``: the active agent's model handed the conversation to another agent of the session."""

from __future__ import annotations

from msgspec.structs import replace

from .._handoff import active_agent, handoff_targets
from .._inputs import HandedOff
from .._state import AgentState
from ._common import reject, require_not_streaming, require_not_summarizing, require_thinking
from ._spend import counted_inside
from ._turns import final_answer_used_tools, settle


def on_handed_off(state: AgentState, inp: HandedOff) -> AgentState:
    """Make ``to_agent`` the active agent and ask the model again: its model, with its instructions and tools,
    over the same conversation. The handing model's call counts as a model call (its tokens and cost too), like
    an internal tool's."""
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    # Otherwise the new call-llm key cancels the streaming call and leaves its message streaming forever.
    require_not_streaming(state, inp, turn)
    current = active_agent(state)
    if inp.from_agent != current:
        reject(
            state,
            inp,
            "not-active-agent",
            "from-active-agent",
            f"expected a handoff from the active agent {current!r}, got one from {inp.from_agent!r}",
        )
    targets = handoff_targets(state)
    if inp.to_agent not in targets:
        offered = ", ".join(map(repr, targets)) or "none"
        reject(
            state,
            inp,
            "unknown-agent",
            "handoff-declared",
            f"agent {current!r} cannot hand off to {inp.to_agent!r}; it hands off to: {offered}",
        )
    state, turn = counted_inside(state, turn, inp)
    agent = "" if inp.to_agent == state.config.agent_name else inp.to_agent
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1, turn=turn, agent=agent)
    return final_answer_used_tools(state) if turn.final_answer else settle(state)
