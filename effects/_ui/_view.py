"""Everything the viewer draws for one session, computed in one fold of its log."""

from __future__ import annotations

from typing import Any

import msgspec

from agent_core import AgentInput, AgentState, format_nanos, phase

from .._observe import COST_ATTRIBUTE, PhaseClock, SpanData, SpanProjection, entries_of, fold_steps, stats_of
from .._store import EventStore, StoredInput, timeline_entry
from ._records import detail_of

_OPERATIONS = {"invoke_agent": "turn", "chat": "model", "execute_tool": "tool"}


def session_view(store: EventStore, session_id: str, *, details: bool = False) -> dict[str, Any]:
    """The session's records, one lane per effect and turn, pending approvals, budgets, conversation and stats.

    ``details`` adds :func:`detail_of` for every record (for a self-contained page).
    """
    info = store.session(session_id)
    projection, clock = SpanProjection(replayed=True), PhaseClock()
    spans: list[SpanData] = []
    records: list[Any] = []
    conversation: list[Any] = []
    per_record: dict[int, Any] = {}
    since: dict[str, int] = {}
    last: list[AgentState] = []

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        spans.extend(projection.step(record.seq, inp, before, after))
        clock.step(inp, after)
        records.append(timeline_entry(record.seq, inp, before, after, since))
        conversation.extend(entries_of(record.seq, inp, before, after))
        if details:
            per_record[record.seq] = detail_of(record.seq, inp, before, after)
        last[:] = [after]

    fold_steps(store, session_id, on_step)
    state = last[0] if last else None
    lanes = [_lane(s) for s in spans]
    if state is not None:
        lanes += [_lane(s) for s in projection.open_spans(state.timestamp)]
    return {
        "session": msgspec.to_builtins(info),
        "phase": phase(state).value if state is not None else "not-started",
        "records": msgspec.to_builtins(records),
        "lanes": sorted(lanes, key=lambda lane: (lane["start"], lane["start_seq"], lane["kind"] != "turn")),
        "approvals": _approvals(state),
        "budgets": _budgets(state, spans),
        "conversation": msgspec.to_builtins(conversation),
        "stats": msgspec.to_builtins(stats_of(session_id, len(records), spans, clock.phase_ms)),
        "details": per_record if details else None,
    }


def _lane(span: SpanData) -> dict[str, Any]:
    attributes = span.attributes
    operation = str(attributes.get("gen_ai.operation.name", ""))
    outcome = attributes.get("agent_core.effect.outcome") or attributes.get("agent_core.turn.outcome", "running")
    return {
        "key": attributes.get("agent_core.effect.key", ""),
        "name": span.name,
        "kind": _OPERATIONS.get(operation, "wait"),
        "start": span.start_ms,
        "end": span.end_ms,
        "start_seq": attributes.get("agent_core.log.seq", 0),
        "end_seq": attributes.get("agent_core.log.seq_end", 0),
        "outcome": "failed" if span.error else outcome,
        "error": span.error,
        "tokens": [attributes.get("gen_ai.usage.input_tokens", 0), attributes.get("gen_ai.usage.output_tokens", 0)],
        "cost": _shown_cost(attributes.get(COST_ATTRIBUTE)),
    }


def _shown_cost(cost: object) -> str | None:
    """A cost in currency units, or ``None`` (not priced, no limit)."""
    return format_nanos(cost) if isinstance(cost, int) else None


def _approvals(state: AgentState | None) -> list[dict[str, str]]:
    if state is None or state.turn is None:
        return []
    calls = state.tool_calls
    return [
        {"tool_call_id": i, "name": calls[i].name, "parameters": calls[i].parameters}
        for i in state.turn.awaiting_ids
        if i in calls
    ]


def _budgets(state: AgentState | None, spans: list[SpanData]) -> dict[str, Any]:
    """The configured per-turn budgets, the open turn's use of them, and the turns that ran out."""
    if state is None:
        return {}
    config, turn = state.config, state.turn
    ran_out = [
        {
            "turn": s.attributes.get("agent_core.turn"),
            "reason": s.attributes.get("agent_core.turn.outcome_reason"),
            "seq": s.attributes.get("agent_core.log.seq_end"),
            "at": s.end_ms,
        }
        for s in spans
        if s.error and s.attributes.get("gen_ai.operation.name") == "invoke_agent"
    ]
    return {
        "limits": {
            "model_calls": config.max_model_calls,
            "tool_calls": config.max_tool_calls,
            "tokens": config.max_tokens,
            "turn_ms": config.max_turn_ms,
            "cost": _shown_cost(config.max_cost),
            "session_cost": _shown_cost(config.max_session_cost),
        },
        "used": None
        if turn is None
        else {
            "turn": turn.number,
            "model_calls": turn.model_calls,
            "tool_calls": turn.tool_call_count,
            "tokens": turn.tokens,
            "turn_ms": state.timestamp - turn.started_at,
            "cost": format_nanos(turn.cost),
            "session_cost": format_nanos(state.cost),
        },
        "ran_out": ran_out,
    }
