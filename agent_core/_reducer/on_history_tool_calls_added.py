"""``history-tool-calls-added``: internal tool, the model asked to see past tool calls."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import HistoryToolCallsAdded
from .._state import AgentState
from ._common import reject, require_not_streaming, require_not_summarizing, require_thinking
from ._spend import counted_inside
from ._turns import final_answer_used_tools, settle


def on_history_tool_calls_added(state: AgentState, inp: HistoryToolCallsAdded) -> AgentState:
    """Bring known past tool calls into the turn's context (repeats and calls already there are
    skipped) and ask the model again. Counts as a model call, like the context window tool."""
    turn = require_thinking(state, inp)
    require_not_summarizing(state, inp)
    # Otherwise the new call-llm key cancels the streaming call and leaves its
    # message streaming forever, which refuses every later model output.
    require_not_streaming(state, inp, turn)
    calls = state.tool_calls
    unknown = [i for i in inp.tool_call_ids if i not in calls]
    if unknown:
        reject(
            state,
            inp,
            "unknown-tool-call",
            "tool-call-exists",
            f"expected ids of tool calls recorded in this session, got unknown ids: {', '.join(map(repr, unknown))}",
        )
    present = set(turn.tool_call_ids)
    added: list[str] = []
    for call_id in inp.tool_call_ids:
        if call_id not in present:
            present.add(call_id)
            added.append(call_id)
    compaction = state.compaction
    if compaction is not None and compaction.cleared:  # a cleared result the model asks for shows again
        asked = frozenset(inp.tool_call_ids)
        still = tuple(call_id for call_id in compaction.cleared if call_id not in asked)
        back = tuple(call_id for call_id in compaction.cleared if call_id in asked)
        state = replace(state, compaction=replace(compaction, cleared=still, restored=compaction.restored + back))
    state, turn = counted_inside(state, turn, inp)
    turn = replace(turn, tool_call_ids=turn.tool_call_ids + tuple(added))
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1, turn=turn)
    return final_answer_used_tools(state) if turn.final_answer else settle(state)
