"""Metrics of a session computed purely from its log, so they work on any past session.

They are read off the same spans :func:`session_spans` produces (turns, model
calls, tool calls, waits), plus the time spent in each phase between inputs.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from agent_core import AgentInput, AgentState, phase

from .._store import EventStore, StoredInput
from ._attributes import COST_ATTRIBUTE
from ._replayed import fold_steps
from ._spans import SpanData, SpanProjection


class Latency(msgspec.Struct, frozen=True, kw_only=True):
    """Durations in ms: how many, mean, median, 95th percentile, max."""

    count: int = 0
    mean_ms: float = 0.0
    p50_ms: int = 0
    p95_ms: int = 0
    max_ms: int = 0


class ToolStats(msgspec.Struct, frozen=True, kw_only=True):
    """One tool's calls: how they ended and how long they ran. ``cancelled`` calls never reported a result."""

    name: str
    calls: int
    succeeded: int
    failed: int
    timed_out: int
    cancelled: int
    latency: Latency


class TurnStats(msgspec.Struct, frozen=True, kw_only=True):
    """One finished turn. ``context_entries`` is the size of the context each model call sent, in order."""

    number: int
    duration_ms: int
    outcome: str
    reason: str = ""
    model_calls: int = 0
    failed_model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    retries: int = 0
    context_entries: tuple[int, ...] = ()
    cost: int = 0


class SessionStats(msgspec.Struct, frozen=True, kw_only=True):
    """What happened in a session, from its log.

    ``phase_ms`` is the time spent in each phase (between the inputs that
    entered and left it). ``budget_exhaustions`` counts failed turns by budget
    (``max-model-calls``, ``max-tool-calls``, ``max-tokens``, ``timeout``);
    ``stuck`` the turns stopped by stuck detection. ``retries`` are model
    calls retried after a retryable failure, waiting ``backoff_ms`` in all.
    ``cost`` is what the priced model calls cost, in nano-units (see :func:`agent_core.nanos`),
    also per turn; a budget pool's refusal counts as ``budget-pool``.
    """

    session_id: str
    records: int
    turns: tuple[TurnStats, ...]
    phase_ms: dict[str, int]
    model_calls: int
    failed_model_calls: int
    input_tokens: int
    output_tokens: int
    model_latency: Latency
    tools: tuple[ToolStats, ...]
    retries: int
    backoff_ms: int
    budget_exhaustions: dict[str, int]
    stuck: int
    outcomes: dict[str, int]
    cost: int = 0


class PhaseClock:
    """Adds up the time spent in each phase, from the timestamps of the inputs that enter and leave it."""

    def __init__(self) -> None:
        self.phase_ms: dict[str, int] = {}
        self._entered: tuple[str, int] | None = None

    def step(self, inp: AgentInput, after: AgentState) -> None:
        """Account for ``inp``: the phase entered by the previous input lasted until now."""
        if self._entered is not None:
            name, since = self._entered
            self.phase_ms[name] = self.phase_ms.get(name, 0) + inp.timestamp - since
        self._entered = (phase(after).value, inp.timestamp)


def session_stats(store: EventStore, session_id: str) -> SessionStats:
    """Fold a stored session once and compute its :class:`SessionStats`."""
    projection, clock = SpanProjection(), PhaseClock()
    spans: list[SpanData] = []

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        spans.extend(projection.step(record.seq, inp, before, after))
        clock.step(inp, after)

    records = fold_steps(store, session_id, on_step)
    return stats_of(session_id, records, spans, clock.phase_ms)


def stats_of(session_id: str, records: int, spans: list[SpanData], phase_ms: dict[str, int]) -> SessionStats:
    """:class:`SessionStats` from a session's finished spans and its time per phase."""
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    waits = [s for s in spans if s.attributes.get("agent_core.wait.reason") == "retry"]
    turns = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    reasons = [str(t.attributes.get("agent_core.turn.outcome_reason", "")) for t in turns if t.error]
    children: dict[int | None, list[SpanData]] = {}
    for span in spans:
        children.setdefault(span.parent_id, []).append(span)
    outcomes: dict[str, int] = {}
    for turn in turns:
        kind = str(turn.attributes.get("agent_core.turn.outcome", "unknown"))
        outcomes[kind] = outcomes.get(kind, 0) + 1
    return SessionStats(
        session_id=session_id,
        records=records,
        turns=tuple(_turn(t, children.get(t.span_id, [])) for t in turns),
        phase_ms=phase_ms,
        model_calls=len(chats),
        failed_model_calls=sum(1 for s in chats if s.error),
        input_tokens=sum(int(s.attributes.get("gen_ai.usage.input_tokens", 0)) for s in chats),
        output_tokens=sum(int(s.attributes.get("gen_ai.usage.output_tokens", 0)) for s in chats),
        model_latency=latency([s.end_ms - s.start_ms for s in chats if _completed(s)]),
        tools=_tools(spans),
        retries=len(waits),
        backoff_ms=sum(s.end_ms - s.start_ms for s in waits),
        budget_exhaustions=_count(r for r in reasons if r.startswith("max-") or r in ("timeout", "budget-pool")),
        stuck=reasons.count("stuck"),
        outcomes=outcomes,
        cost=_cost(chats),
    )


def _turn(turn: SpanData, children: list[SpanData]) -> TurnStats:
    chats = [s for s in children if s.attributes.get("gen_ai.operation.name") == "chat"]
    return TurnStats(
        number=int(turn.attributes.get("agent_core.turn", 0)),
        duration_ms=turn.end_ms - turn.start_ms,
        outcome=str(turn.attributes.get("agent_core.turn.outcome", "unknown")),
        reason=str(turn.attributes.get("agent_core.turn.outcome_reason", "")),
        model_calls=len(chats),
        failed_model_calls=sum(1 for s in chats if s.error),
        input_tokens=sum(int(s.attributes.get("gen_ai.usage.input_tokens", 0)) for s in chats),
        output_tokens=sum(int(s.attributes.get("gen_ai.usage.output_tokens", 0)) for s in chats),
        tool_calls=sum(1 for s in children if s.attributes.get("gen_ai.operation.name") == "execute_tool"),
        retries=sum(1 for s in children if s.attributes.get("agent_core.wait.reason") == "retry"),
        context_entries=tuple(int(s.attributes.get("agent_core.context.entries", 0)) for s in chats),
        cost=_cost(chats),
    )


def _cost(chats: list[SpanData]) -> int:
    return sum(int(s.attributes.get(COST_ATTRIBUTE, 0)) for s in chats)


def _tools(spans: list[SpanData]) -> tuple[ToolStats, ...]:
    by_name: dict[str, list[SpanData]] = {}
    for span in spans:
        if span.attributes.get("gen_ai.operation.name") == "execute_tool":
            by_name.setdefault(str(span.attributes["gen_ai.tool.name"]), []).append(span)
    return tuple(
        ToolStats(
            name=name,
            calls=len(calls),
            succeeded=sum(1 for s in calls if _completed(s) and not s.error),
            failed=sum(1 for s in calls if s.attributes.get("error.type") == "error"),
            timed_out=sum(1 for s in calls if s.attributes.get("error.type") == "timeout"),
            cancelled=sum(1 for s in calls if s.attributes.get("agent_core.effect.outcome") == "cancelled"),
            latency=latency([s.end_ms - s.start_ms for s in calls if not _cancelled(s)]),
        )
        for name, calls in sorted(by_name.items())
    )


def latency(durations: list[int]) -> Latency:
    """Summary of ``durations`` (ms); nearest-rank percentiles."""
    if not durations:
        return Latency()
    ordered = sorted(durations)
    return Latency(
        count=len(ordered),
        mean_ms=round(sum(ordered) / len(ordered), 1),
        p50_ms=_rank(ordered, 50),
        p95_ms=_rank(ordered, 95),
        max_ms=ordered[-1],
    )


def _rank(ordered: list[int], percent: int) -> int:
    return ordered[max(0, -(-len(ordered) * percent // 100) - 1)]


def _completed(span: SpanData) -> bool:
    return span.attributes.get("agent_core.effect.outcome") == "completed"


def _cancelled(span: SpanData) -> bool:
    return span.attributes.get("agent_core.effect.outcome") == "cancelled"


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts
