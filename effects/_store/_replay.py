"""``replay_session``: fold a stored session from its first record, verifying what the log recorded."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agent_core import AgentInput, AgentState, state_hash

from ._errors import LogDamaged, ReplayDiverged
from ._fold import Position, chained, fold
from ._load import dated
from ._protocol import EventStore
from ._records import StoredInput

Progress = Callable[[int, int], None]
"""Receives ``(records done, records in all)`` while a long replay runs."""

PROGRESS_EVERY = 4096
"""Records between two progress reports."""


class ReplayReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a replay went through: ``records`` folded, ``turns_checked`` turn digests and
    ``states_checked`` full state hashes compared, and the resulting state and its hash."""

    session_id: str
    records: int
    turns_checked: int
    states_checked: int
    state: AgentState
    state_hash: str


def replay_session(
    store: EventStore,
    session_id: str,
    *,
    verify: bool = True,
    until: int | None = None,
    progress: Progress | None = None,
) -> ReplayReport:
    """Fold a session from its first record with this release's reducer, ignoring snapshots.

    Always checks the hash chain and that every input is still accepted. With
    ``verify`` it also recomputes the turn digests and full state hashes the
    log recorded, and stops at the first difference with
    :class:`ReplayDiverged` (record number, input type, expected and actual
    hash): the check to run before deploying a new reducer over live logs.
    ``until`` stops after that record.
    """
    length = store.session(session_id).length
    stop = length if until is None else min(until, length)
    counts = [0, 0]

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        counts[0] += record.turn_digest is not None
        counts[1] += record.state_hash is not None
        if progress is not None and record.seq % PROGRESS_EVERY == 0:
            progress(record.seq, stop)

    start = Position.start()
    records = store.read(session_id, 1, stop)
    try:
        end = fold(session_id, records, start, stop, digests=verify, states=verify, on_step=on_step)
    except ReplayDiverged as diverged:
        _blame_damage(store, session_id, stop, diverged)
        raise dated(store, session_id, diverged) from None
    if progress is not None:
        progress(stop, stop)
    return ReplayReport(
        session_id=session_id,
        records=end.seq,
        turns_checked=counts[0] if verify else 0,
        states_checked=counts[1] if verify else 0,
        state=end.state,
        state_hash=state_hash(end.state),
    )


def _blame_damage(store: EventStore, session_id: str, stop: int, diverged: ReplayDiverged) -> None:
    """Raise :class:`LogDamaged` instead of ``diverged`` when the hash chain fails further on.

    A record changed on disk together with its own hash passes the chain and
    makes the reducer diverge; the chain then fails at the next record. That
    divergence is storage damage, not a changed reducer.
    """
    try:
        for _ in chained(session_id, store.read(session_id, 1, stop), stop):
            pass
    except LogDamaged as damage:
        raise LogDamaged(
            session_id,
            diverged.record,
            f"replay diverges here ({diverged.kind}) and the hash chain fails at record {damage.record} "
            f"({damage.problem}): this may be storage damage rather than a changed reducer",
        ) from diverged
