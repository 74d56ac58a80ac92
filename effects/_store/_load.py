"""Loading a session: the newest valid snapshot, then a fold of the records after it."""

from __future__ import annotations

import logging

from agent_core import STATE_FORMAT, AgentState, DecodeError, decode_state, state_digest

from ._errors import ReplayDiverged
from ._integrity import Position, chained, fold
from ._protocol import EventStore
from ._records import Snapshot
from ._snapshots import disagreement

logger = logging.getLogger("effects.store")


def load_position(store: EventStore, session_id: str, at: int | None = None) -> tuple[Position, int]:
    """The session after record ``at`` (default: its last), and the seq of the snapshot used (0: none).

    Raises :class:`SessionNotFound`, ``ValueError`` for an ``at`` outside the
    log, :class:`LogDamaged` / :class:`ReplayDiverged` when the records after
    the snapshot do not fold. A snapshot that is not of this log (see
    :func:`disagreement`) is ignored with a warning on the ``effects.store``
    logger, and the log folded from its first record.
    """
    length = store.session(session_id).length
    stop = length if at is None else at
    if not 0 <= stop <= length:
        raise ValueError(f"session {session_id!r} has records 1 to {length}; got {at}")
    start, used, records = Position.start(), 0, None
    snapshot = store.load_snapshot(session_id, at_most=stop)
    state = usable(snapshot)
    if snapshot is not None and state is not None:
        tail = store.read(session_id, snapshot.seq, stop)
        anchor = next(tail, None)  # the record the snapshot follows: the chain's head from there on
        why = "" if anchor is None else disagreement(snapshot, anchor)
        if anchor is not None and not why:
            start, used, records = Position(state, snapshot.seq, anchor.hash), snapshot.seq, tail
        elif why:
            logger.warning(
                "session %r: the snapshot after record %d is not of this log: %s; it is ignored and the log "
                "folded from its first record (the next snapshot a journal saves supersedes it)",
                session_id, snapshot.seq, why,
            )  # fmt: skip
    if records is None:
        records = store.read(session_id, 1, stop)
    try:
        return fold(session_id, records, start, stop), used
    except ReplayDiverged as diverged:
        raise dated(store, session_id, diverged) from None


def dated(store: EventStore, session_id: str, diverged: ReplayDiverged) -> ReplayDiverged:
    """``diverged``, naming the older release that wrote the store when a recorded hash differs and the
    session's snapshot carries an older state format (it computed its hashes differently)."""
    if diverged.kind not in ("turn digest", "state hash"):
        return diverged
    snapshot = store.load_snapshot(session_id)
    if snapshot is None or snapshot.schema_version >= STATE_FORMAT:
        return diverged
    return diverged.written_by_format(snapshot.schema_version)


def load_for_append(store: EventStore, session_id: str) -> tuple[Position, int]:
    """:func:`load_position` at the end, after also checking the hash chain of the records the snapshot skipped.

    A session is appended to only when its whole log verifies: otherwise new
    records would extend a chain every tool refuses. Raises :class:`LogDamaged`
    naming the first bad record.
    """
    position, used = load_position(store, session_id)
    for _ in chained(session_id, store.read(session_id, 1, used), used):
        pass
    return position, used


def load_state(store: EventStore, session_id: str, at: int | None = None) -> AgentState:
    """The state of a session after record ``at`` (default: after its last record).

    Uses the newest valid snapshot at or before ``at`` and folds the rest,
    checking the hash chain and the turn digests on the way.
    """
    return load_position(store, session_id, at)[0].state


def usable(snapshot: Snapshot | None) -> AgentState | None:
    """The snapshot's state if it is of this state format and its bytes hash to its recorded state hash."""
    if snapshot is None or snapshot.schema_version != STATE_FORMAT:
        return None
    if state_digest(snapshot.data) != snapshot.state_hash:
        return None
    try:
        return decode_state(snapshot.data, format="msgpack")
    except DecodeError:
        return None
