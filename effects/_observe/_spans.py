"""Spans as a pure projection of a session's inputs and the states the reducer gives.

:class:`SpanProjection` is fed ``(seq, input, state before, state after)``
steps, from a stored log (:func:`session_spans`) or from a running session's
``state-updated`` events (:class:`~effects.SessionTracer`): the same steps give
the same spans. A turn is an ``invoke_agent`` span (a child session's, one started by an agent
called as a tool, is a child of the calling session's ``execute_tool`` span,
in the root session's trace); each effect the state
derives is a child span from the input that derived it to the input that
ended it: ``call-llm`` a ``chat`` span, ``call-tool`` an ``execute_tool``
span, a retry backoff's ``wait-until`` a ``wait retry`` span. The turn's
deadline timer gets none: it is a guard over the whole turn, not work, and a
turn it ends says so in the turn span's outcome. Ids come
from the session id and the effect keys (:func:`span_id_of`).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agent_core import AgentInput, AgentState, Lineage, effects_at, tag_of, tool_call_id_of

from .._machine import reconcile
from .._store import answered_by
from ._attributes import effect_end, effect_start, input_event, turn_end, turn_start
from ._conventions import Conventions, span_id_of, trace_id_of

Attributes = dict[str, Any]


class SpanEvent(msgspec.Struct, frozen=True, kw_only=True):
    """Something that happened during a span, at ``timestamp`` (ms since the epoch)."""

    name: str
    timestamp: int
    attributes: Attributes = {}


class SpanData(msgspec.Struct, frozen=True, kw_only=True):
    """A finished span, ready for any exporter. Times are ms since the epoch; ids are OpenTelemetry-sized ints.

    ``error`` is the status description of a failed span (empty when it did not fail).
    """

    name: str
    kind: Literal["internal", "client"]
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ms: int
    end_ms: int
    attributes: Attributes
    events: tuple[SpanEvent, ...] = ()
    error: str = ""


class _Open(msgspec.Struct, kw_only=True):
    name: str
    kind: Literal["internal", "client"]
    parent: str | None
    start_ms: int
    attributes: Attributes
    events: list[SpanEvent]


class SpanProjection:
    """Turns steps into finished spans; keeps the open ones. Pure: no clock, no I/O.

    ``replayed`` marks every span ``agent_core.replayed = true``: spans from a
    stored log report what the log says happened, not effects executed now.
    Start from a state other than the initial one (a resumed session) with
    ``state``: its open turn and effects become open spans, timed from the state.
    """

    def __init__(
        self, conventions: Conventions | None = None, *, replayed: bool = False, state: AgentState | None = None
    ) -> None:
        self.conventions = conventions if conventions is not None else Conventions()
        self.replayed = replayed
        self.session_id = ""
        self.lineage: Lineage | None = None
        self._open: dict[str, _Open] = {}
        if state is not None and state.started:
            self._resume(state)

    def step(self, seq: int, inp: AgentInput, before: AgentState, after: AgentState) -> list[SpanData]:
        """The spans ``inp`` (record ``seq``) ended; opens the spans it started."""
        self.session_id, self.lineage = after.session_id, after.config.lineage
        at = inp.timestamp
        done: list[SpanData] = []
        plan = reconcile(effects_at(before), effects_at(after))
        for key in filter(_traced, plan.cancel):
            done.extend(self._end(key, at, seq, effect_end(inp, key, after, answered_by(inp, key), self.conventions)))
        turn_key = _turn_key(before)
        if turn_key in self._open:
            self._open[turn_key].events.append(
                SpanEvent(name=tag_of(inp), timestamp=at, attributes=input_event(seq, inp))
            )
        if turn_key is not None and turn_key != _turn_key(after):
            done.extend(self._end(turn_key, at, seq, turn_end(after, self.conventions)))
        new_turn = _turn_key(after)
        if new_turn is not None and new_turn not in self._open:
            self._start(new_turn, None, at, seq, turn_start(after, self.conventions))
            self._open[new_turn].events.append(
                SpanEvent(name=tag_of(inp), timestamp=at, attributes=input_event(seq, inp))
            )
        for key in filter(_traced, plan.start):
            self._start(key, new_turn, at, seq, effect_start(key, after, self.conventions))
        return done

    def open_spans(self, now_ms: int) -> list[SpanData]:
        """The spans still open (a turn in progress, effects running), as if they ended at ``now_ms``,
        with ``agent_core.effect.outcome = running``. They stay open."""
        spans = []
        for key, span in self._open.items():
            [data] = self._finish(key, span, now_ms, 0, ({"agent_core.effect.outcome": "running"}, "", None))
            spans.append(data)
        return spans

    def add_event(self, key: str, event: SpanEvent) -> None:
        """Add an event to the open span of effect ``key`` (``turn:<n>`` for a turn); ignored if none is open."""
        if key in self._open:
            self._open[key].events.append(event)

    def is_open(self, key: str) -> bool:
        """Whether a span for ``key`` is open."""
        return key in self._open

    def _start(self, key: str, parent: str | None, at: int, seq: int, spec: tuple[str, str, Attributes]) -> None:
        name, kind, attributes = spec
        attributes = {**attributes, "agent_core.log.seq": seq, "agent_core.effect.key": key}
        if self.replayed:
            attributes["agent_core.replayed"] = True
        self._open[key] = _Open(
            name=name,
            kind="client" if kind == "client" else "internal",
            parent=parent,
            start_ms=at,
            attributes=attributes,
            events=[],
        )

    def _end(self, key: str, at: int, seq: int, outcome: tuple[Attributes, str, int | None]) -> list[SpanData]:
        span = self._open.pop(key, None)
        return [] if span is None else self._finish(key, span, at, seq, outcome)

    def _finish(
        self, key: str, span: _Open, at: int, seq: int, outcome: tuple[Attributes, str, int | None]
    ) -> list[SpanData]:
        attributes, error, started = outcome
        start = span.start_ms if started is None else max(span.start_ms, min(started, at))
        sid, lineage = self.session_id, self.lineage
        if span.parent is not None:
            parent_id: int | None = span_id_of(sid, span.parent)
        elif lineage is not None:  # a child session's turn: under the calling session's execute_tool span
            parent_id = span_id_of(lineage.parent_session_id, f"call-tool:{lineage.parent_tool_call_id}")
        else:
            parent_id = None
        return [
            SpanData(
                name=span.name,
                kind=span.kind,
                trace_id=trace_id_of(sid if lineage is None else lineage.root_session_id),  # one trace per tree
                span_id=span_id_of(sid, key),
                parent_id=parent_id,
                start_ms=start,
                end_ms=at,
                attributes={
                    **span.attributes,
                    **attributes,
                    "agent_core.log.seq_end": seq,
                    "agent_core.duration_ms": at - start,
                },
                events=tuple(span.events),
                error=error,
            )
        ]

    def _resume(self, state: AgentState) -> None:
        self.session_id, self.lineage = state.session_id, state.config.lineage
        turn_key = _turn_key(state)
        if turn_key is None or state.turn is None:
            return
        self._start(turn_key, None, state.turn.started_at, state.step, turn_start(state, self.conventions))
        for key in filter(_traced, effects_at(state)):
            self._start(key, turn_key, _started_at(key, state), state.step, effect_start(key, state, self.conventions))


def _traced(key: str) -> bool:
    return not key.startswith("wait-until:deadline:")


def _turn_key(state: AgentState) -> str | None:
    return None if state.turn is None else f"turn:{state.turn.number}"


def _started_at(key: str, state: AgentState) -> int:
    if key.startswith("call-tool:"):
        record = state.tool_calls.get(tool_call_id_of(key))
        if record is not None and record.requested_at:
            return record.requested_at
    if key.startswith("call-llm:") and state.called_llm_at:
        return state.called_llm_at
    return state.timestamp
