"""What the viewer shows at one record: the input, the state after it, what changed, and the model's context."""

from __future__ import annotations

import itertools
from typing import Any

import msgspec

from agent_core import AgentInput, AgentState, effects_at, encode_input, format_nanos, llm_context, phase

from .._observe import context_messages, messages_newest_first
from .._store import EventStore
from ._bounds import DETAIL_BYTES, MAX_DETAIL_BYTES, MIN_DETAIL_BYTES, clip, size
from ._cursor import Cursors

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


def record_view(store: EventStore, session_id: str, seq: int, *, budget: int = DETAIL_BYTES) -> dict[str, Any]:
    """:func:`detail_of` for one stored record, cut to ``budget`` bytes of JSON (``cut`` says whether it was)."""
    return record_detail(store, session_id, seq, budget, Cursors())


def record_detail(store: EventStore, session_id: str, seq: int, budget: int, cursors: Cursors) -> dict[str, Any]:
    """:func:`record_view`, taking the states from a cursor that folded the record lately, if one did."""
    length = store.session(session_id).length
    if not 1 <= seq <= length:
        raise ValueError(f"session {session_id!r} has records 1 to {length}; there is no record {seq}")
    if not MIN_DETAIL_BYTES <= budget <= MAX_DETAIL_BYTES:
        raise ValueError(f"a record's detail takes {MIN_DETAIL_BYTES} to {MAX_DETAIL_BYTES} bytes; got {budget}")
    states = cursors.states(session_id, seq)
    if states is None:
        cursor = cursors.take(store, session_id, seq - 1)
        cursor.advance(store, seq, lambda part: True)
        states = cursor.states[seq - 1], cursor.states[seq]
        cursors.put(cursor)
    [record] = store.read(session_id, seq, seq)
    detail = detail_of(seq, record.decode(), *states)
    whole, cut = size(detail), clip(detail, budget)
    shown = cut if isinstance(cut, dict) else {"seq": seq, "note": cut}
    return {**shown, "bytes": whole, "cut": whole > budget}
