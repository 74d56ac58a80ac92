"""The viewer's fold of one session, kept between requests: following a session costs its new records only.

A :class:`Cursor` stands after some record of a session with the state
there, the spans still open and the states of the records it folded last. It
folds on from there, giving for each record what a page shows of it (its
timeline entry, its conversation entries, the lanes it ended).
:class:`Cursors` keeps a few of them: a page asking for the records after
the last one it has finds the cursor the previous answer left there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from agent_core import AgentInput, AgentState, effects_at, format_nanos

from .._observe import COST_ATTRIBUTE, SpanData, SpanProjection, entries_of
from .._store import EventStore, Position, StoredInput, fold, load_state, timeline_entry

KEPT_STATES = 1000
"""States a cursor keeps of the records it folded last: the detail of a record near it needs no fold."""

KEPT_CURSORS = 4
"""Cursors kept between requests (a session followed in two tabs uses two)."""

CHECKPOINT_EVERY = 2000
"""A state is kept every this many records the viewer folds: a page far back folds at most this many to start."""

KEPT_SESSIONS = 4
"""Sessions whose checkpoints are kept (the least recently used are forgotten)."""

_OPERATIONS = {"invoke_agent": "turn", "chat": "model", "execute_tool": "tool"}


class Folded(NamedTuple):
    """One record as a cursor folded it: its input, the states around it, and its ``part`` of a page."""

    seq: int
    input: AgentInput
    before: AgentState
    after: AgentState
    part: dict[str, Any]


class _Enough(Exception):
    """Raised through the fold when the caller has taken enough records."""


class Cursor:
    """A session folded up to record ``seq``: the ``state`` there, its chain hash ``head``, the spans still
    open (``projection``), and the states after the last :data:`KEPT_STATES` records folded.

    A cursor made at record ``n > 0`` (:meth:`at`) resumes its spans from the
    state: a turn or effect running at ``n`` gets ``n`` as its first record and
    its start time from the state (exact for turns, model and tool calls; a
    retry's backoff is taken to start at record ``n``). With ``checkpoints`` it
    keeps a state there every :data:`CHECKPOINT_EVERY` records it folds.
    """

    def __init__(self, session_id: str, position: Position, checkpoints: Checkpoints | None = None) -> None:
        self.session_id = session_id
        self.state, self.seq, self.head = position
        self.projection = SpanProjection(replayed=True, state=self.state)
        self.states: OrderedDict[int, AgentState] = OrderedDict({self.seq: self.state})
        self.checkpoints = checkpoints
        running = effects_at(self.state)  # when each began, for the durations of those a record ends
        opened = self.projection.open_spans(self.state.timestamp)
        self._since = {key: span.start_ms for span in opened if (key := _key(span)) in running}

    @classmethod
    def at(cls, store: EventStore, session_id: str, seq: int, checkpoints: Checkpoints | None = None) -> Cursor:
        """A cursor after record ``seq`` (0: before the first): from the nearest checkpoint, or the newest
        snapshot, whichever needs the shorter fold."""
        start = Position.start() if checkpoints is None else checkpoints.nearest(session_id, seq)
        if seq - start.seq > CHECKPOINT_EVERY:
            snapshot = store.load_snapshot(session_id, at_most=seq)
            if snapshot is not None and snapshot.seq > start.seq:
                state = load_state(store, session_id, seq)
                [record] = store.read(session_id, seq, seq)
                return cls(session_id, Position(state, seq, record.hash), checkpoints)

        def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
            if checkpoints is not None and record.seq % CHECKPOINT_EVERY == 0:
                checkpoints.add(session_id, Position(after, record.seq, record.hash))

        records = store.read(session_id, start.seq + 1, seq) if seq > start.seq else iter(())
        return cls(session_id, fold(session_id, records, start, seq, digests=False, on_step=on_step), checkpoints)

    def advance(self, store: EventStore, stop: int, take: Callable[[Folded], bool]) -> None:
        """Fold records ``seq + 1 .. stop``; ``take`` gets each record folded and says whether to go on.

        The hash chain is checked on the way (:class:`~effects.LogDamaged`).
        """
        if stop <= self.seq:
            return
        records = store.read(self.session_id, self.seq + 1, stop)

        def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
            part = self._part(record.seq, inp, before, after)
            self.state, self.seq, self.head = after, record.seq, record.hash
            self.states[record.seq] = after
            if len(self.states) > KEPT_STATES:
                self.states.popitem(last=False)
            if self.checkpoints is not None and record.seq % CHECKPOINT_EVERY == 0:
                self.checkpoints.add(self.session_id, Position(after, record.seq, record.hash))
            if not take(Folded(record.seq, inp, before, after, part)):
                raise _Enough

        try:
            fold(
                self.session_id,
                records,
                Position(self.state, self.seq, self.head),
                stop,
                digests=False,
                on_step=on_step,
            )
        except _Enough:
            pass
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()

    def open_lanes(self) -> list[dict[str, Any]]:
        """The turn and effects still running after record ``seq``, drawn up to the state's time."""
        return [lane_of(span) for span in self.projection.open_spans(self.state.timestamp)]

    def _part(self, seq: int, inp: AgentInput, before: AgentState, after: AgentState) -> dict[str, Any]:
        ended = self.projection.step(seq, inp, before, after)
        return {
            "record": msgspec.to_builtins(timeline_entry(seq, inp, before, after, self._since)),
            "conversation": msgspec.to_builtins(entries_of(seq, inp, before, after)),
            "lanes": [lane_of(span) for span in ended],
        }


def _key(span: SpanData) -> str:
    return str(span.attributes.get("agent_core.effect.key", ""))


def lane_of(span: SpanData) -> dict[str, Any]:
    """A span as the timeline draws it: one lane, coloured by how it ended."""
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
        "reason": attributes.get("agent_core.turn.outcome_reason", ""),
        "error": span.error,
        "tokens": [attributes.get("gen_ai.usage.input_tokens", 0), attributes.get("gen_ai.usage.output_tokens", 0)],
        "cost": shown_cost(attributes.get(COST_ATTRIBUTE)),
    }


def shown_cost(cost: object) -> str | None:
    """A cost in currency units, or ``None`` (not priced, no limit)."""
    return format_nanos(cost) if isinstance(cost, int) else None


class Checkpoints:
    """States every :data:`CHECKPOINT_EVERY` records of the sessions the viewer folded lately (the states of
    one session share their structure, so many cost little more than one). Thread-safe."""

    def __init__(self, sessions: int = KEPT_SESSIONS) -> None:
        self.sessions = sessions
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, dict[int, Position]] = OrderedDict()

    def add(self, session_id: str, position: Position) -> None:
        """Keep ``position`` of the session."""
        with self._lock:
            self._kept.setdefault(session_id, {})[position.seq] = position
            self._kept.move_to_end(session_id)
            while len(self._kept) > self.sessions:
                self._kept.popitem(last=False)

    def nearest(self, session_id: str, seq: int) -> Position:
        """The kept position of the session nearest before or at record ``seq`` (the start if none is)."""
        with self._lock:
            kept = self._kept.get(session_id, {})
            best = max((at for at in kept if at <= seq), default=0)
            return kept[best] if best else Position.start()

    def forget(self, session_id: str) -> None:
        """Drop the session's checkpoints."""
        with self._lock:
            self._kept.pop(session_id, None)


class Cursors:
    """The last :data:`KEPT_CURSORS` cursors used, by session and record, and the checkpoints they left.
    Thread-safe: a cursor is taken out while a request folds with it and put back after, so two requests
    never fold with the same one."""

    def __init__(self, kept: int = KEPT_CURSORS) -> None:
        self.kept = kept
        self.checkpoints = Checkpoints()
        self._lock = threading.Lock()
        self._cursors: OrderedDict[tuple[str, int], Cursor] = OrderedDict()

    def take(self, store: EventStore, session_id: str, seq: int) -> Cursor:
        """The kept cursor after record ``seq`` of the session, or a new one."""
        with self._lock:
            cursor = self._cursors.pop((session_id, seq), None)
        return cursor if cursor is not None else Cursor.at(store, session_id, seq, self.checkpoints)

    def put(self, cursor: Cursor) -> None:
        """Keep ``cursor`` (where it stands now), forgetting the least recently used beyond :attr:`kept`."""
        with self._lock:
            self._cursors[(cursor.session_id, cursor.seq)] = cursor
            self._cursors.move_to_end((cursor.session_id, cursor.seq))
            while len(self._cursors) > self.kept:
                self._cursors.popitem(last=False)

    def states(self, session_id: str, seq: int) -> tuple[AgentState, AgentState] | None:
        """The states before and after record ``seq``, if a kept cursor folded it lately."""
        with self._lock:
            for (sid, _), cursor in reversed(self._cursors.items()):
                if sid == session_id and seq - 1 in cursor.states and seq in cursor.states:
                    return cursor.states[seq - 1], cursor.states[seq]
        return None

    def head(self, session_id: str, seq: int) -> AgentState | None:
        """The state after record ``seq`` if a kept cursor stands there."""
        with self._lock:
            cursor = self._cursors.get((session_id, seq))
            return None if cursor is None else cursor.state

    def forget(self, session_id: str) -> None:
        """Drop the session's cursors and checkpoints (its log is not what they folded: damaged, or written anew)."""
        self.checkpoints.forget(session_id)
        with self._lock:
            for key in [key for key in self._cursors if key[0] == session_id]:
                del self._cursors[key]
