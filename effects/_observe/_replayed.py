"""Spans of a stored session, computed after the fact by folding its log through :class:`SpanProjection`."""

from __future__ import annotations

from agent_core import AgentInput, AgentState

from .._store import EventStore, Position, Step, StoredInput, fold
from ._conventions import Conventions
from ._spans import SpanData, SpanProjection


def fold_steps(store: EventStore, session_id: str, on_step: Step, *, until: int | None = None) -> int:
    """Fold records ``1..until`` (default: all) of a stored session, calling ``on_step`` after each.

    The hash chain is checked on the way (:class:`~effects.LogDamaged`). Returns the last record's number.
    """
    length = store.session(session_id).length
    last = length if until is None else min(until, length)
    fold(
        session_id,
        store.read(session_id, 1, last),
        Position.start(),
        last,
        digests=False,
        on_step=on_step,
    )
    return last


def session_spans(
    store: EventStore, session_id: str, conventions: Conventions | None = None, *, until: int | None = None
) -> list[SpanData]:
    """The finished spans of a stored session (records ``1..until``), each marked ``agent_core.replayed``.

    A replay reports what the log says happened; it executes nothing, and
    spans still open at the end (a turn in progress) are not reported.
    """
    projection = SpanProjection(conventions, replayed=True)
    spans: list[SpanData] = []

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        spans.extend(projection.step(record.seq, inp, before, after))

    fold_steps(store, session_id, on_step, until=until)
    return spans
