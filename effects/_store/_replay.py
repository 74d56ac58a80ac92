"""``replay_session``: fold a stored session from its first record, verifying what the log recorded."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agent_core import AgentInput, AgentState, state_digest, state_hash

from ._errors import LogDamaged, ReplayDiverged
from ._integrity import Position, chained, fold
from ._load import dated, usable
from ._protocol import EventStore
from ._records import Snapshot, StoredInput
from ._snapshots import disagreement

Progress = Callable[[int, int], None]
"""Receives ``(records done, records in all)`` while a long replay runs."""

PROGRESS_EVERY = 4096
"""Records between two progress reports."""


class ReplayReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a replay went through: ``records`` folded, ``turns_checked`` turn digests and
    ``states_checked`` full state hashes compared, and the resulting state and its hash.

    With ``verify``, the newest snapshot up to the end of the replay is compared
    with the fold: ``snapshot_seq`` is the record it follows (0: none compared),
    ``snapshot_problem`` why it is not the log's state there (``""``: it is).
    ``snapshot_ignored`` says whether loading the session ignores it anyway (it
    follows another history): then it only costs a longer fold; otherwise a load
    would start from a wrong state.
    """

    session_id: str
    records: int
    turns_checked: int
    states_checked: int
    state: AgentState
    state_hash: str
    snapshot_seq: int = 0
    snapshot_problem: str = ""
    snapshot_ignored: bool = False


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
    It also compares the newest snapshot with the fold (see :class:`ReplayReport`).
    ``until`` stops after that record.
    """
    length = store.session(session_id).length
    stop = length if until is None else min(until, length)
    counts = [0, 0]
    snapshot = store.load_snapshot(session_id, at_most=stop) if verify else None
    compared: list[tuple[int, str, bool]] = []

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        counts[0] += record.turn_digest is not None
        counts[1] += record.state_hash is not None
        if snapshot is not None and record.seq == snapshot.seq and usable(snapshot) is not None:
            compared.append(_compare_snapshot(snapshot, record, after))
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
    seq, problem, ignored = compared[0] if compared else (0, "", False)
    return ReplayReport(
        session_id=session_id,
        records=end.seq,
        turns_checked=counts[0] if verify else 0,
        states_checked=counts[1] if verify else 0,
        state=end.state,
        state_hash=state_hash(end.state),
        snapshot_seq=seq,
        snapshot_problem=problem,
        snapshot_ignored=ignored,
    )


def _compare_snapshot(snapshot: Snapshot, record: StoredInput, state: AgentState) -> tuple[int, str, bool]:
    """The report's ``snapshot_*`` fields for ``snapshot``, compared with the log's ``record`` and ``state`` after it."""
    why = disagreement(snapshot, record)
    if why:
        return snapshot.seq, why, True
    digest = state_digest(state)
    if digest == snapshot.state_hash:
        return snapshot.seq, "", False
    problem = (
        f"its state is not the log's state after record {record.seq} (state hash {snapshot.state_hash.hex()}, "
        f"the log folds to {digest.hex()}), and loading the session starts from it"
    )
    return snapshot.seq, problem, False


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
