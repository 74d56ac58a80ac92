"""What the viewer shows at one record: the input, the state after it, what changed, and the model's context."""

from __future__ import annotations

import itertools
from typing import Any

import msgspec

from agent_core import AgentInput, AgentState, effects_at, encode_input, format_nanos, llm_context, phase

from .._observe import context_messages, messages_newest_first
from .._store import EventStore, load_state

LAST_MESSAGES = 6
"""How many of the latest messages the state view lists (the conversation view has them all)."""


def state_view(state: AgentState) -> dict[str, Any]:
    """The parts of a state a person inspects, as JSON-ready values."""
    turn_calls = state.turn.tool_call_ids if state.turn is not None else ()
    latest = list(itertools.islice(messages_newest_first(state), LAST_MESSAGES))[::-1]
    return {
        "phase": phase(state).value,
        "step": state.step,
        "timestamp": state.timestamp,
        "turns": state.turns,
        "turn": msgspec.to_builtins(state.turn),
        "last_outcome": msgspec.to_builtins(state.last_outcome),
        "input_tokens": state.input_tokens,
        "output_tokens": state.output_tokens,
        "cost": format_nanos(state.cost),
        "messages": len(state.messages),
        "latest_messages": [{"id": m.id, "role": m.role, "content": m.content} for m in latest],
        "queued": [m.id for m in state.queued],
        "turn_tool_calls": {
            i: {"name": r.name, "status": r.status, "parameters": r.parameters, "result": msgspec.to_builtins(r.result)}
            for i in turn_calls
            if (r := state.tool_calls.get(i)) is not None
        },
        "effects": list(effects_at(state)),
    }


def diff(before: dict[str, Any], after: dict[str, Any], path: str = "") -> list[dict[str, Any]]:
    """The leaves that differ between two JSON-like dicts: ``{path, before, after}`` each."""
    changes: list[dict[str, Any]] = []
    for key in sorted(set(before) | set(after), key=str):
        old, new = before.get(key), after.get(key)
        where = f"{path}.{key}" if path else str(key)
        if isinstance(old, dict) and isinstance(new, dict):
            changes.extend(diff(old, new, where))
        elif old != new:
            changes.append({"path": where, "before": old, "after": new})
    return changes


def detail_of(seq: int, inp: AgentInput, before: AgentState, after: AgentState) -> dict[str, Any]:
    """Record ``seq``: its input, the state after it, the changes, and the model context if it starts a call."""
    view, previous = state_view(after), state_view(before)
    started_llm = [k for k in effects_at(after) if k.startswith("call-llm:") and k not in previous["effects"]]
    context = None
    if started_llm:
        ctx = llm_context(after)
        context = {
            "key": started_llm[0],
            "system": ctx.system_prompt,
            "messages": context_messages(ctx),
            "tools": [t.name for t in ctx.tools],
        }
    return {
        "seq": seq,
        "input": msgspec.json.decode(encode_input(inp)),
        "state": view,
        "diff": diff(previous, view),
        "context": context,
    }


def record_view(store: EventStore, session_id: str, seq: int) -> dict[str, Any]:
    """:func:`detail_of` for one stored record (the states come from snapshots and a short fold)."""
    length = store.session(session_id).length
    if not 1 <= seq <= length:
        raise ValueError(f"session {session_id!r} has records 1 to {length}; there is no record {seq}")
    before = load_state(store, session_id, seq - 1)
    after = load_state(store, session_id, seq)
    [record] = list(store.read(session_id, seq, seq))
    return detail_of(seq, record.decode(), before, after)
