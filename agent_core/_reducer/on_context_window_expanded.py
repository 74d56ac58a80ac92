"""``context-window-expanded``: internal tool, the model asked for older messages."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ContextWindowExpanded
from .._state import AgentState
from ._common import require_not_streaming, require_not_summarizing, require_thinking
from ._spend import counted_inside
from ._turns import final_answer_used_tools, settle


def on_context_window_expanded(state: AgentState, inp: ContextWindowExpanded) -> AgentState:
    """Widen the window by ``context_window_step``, capped at the message count, and ask the
    model again. The request counts as a model call (its tokens and cost too), so the budgets bound it."""
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    # Otherwise the new call-llm key cancels the streaming call and leaves its
    # message streaming forever, which refuses every later model output.
    require_not_streaming(state, inp, turn)
    window = min(turn.context_window_size + state.config.context_window_step, len(state.messages))
    state, turn = counted_inside(state, turn, inp)
    turn = replace(turn, context_window_size=max(window, turn.context_window_size))
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1, turn=turn)
    return final_answer_used_tools(state) if turn.final_answer else settle(state)
