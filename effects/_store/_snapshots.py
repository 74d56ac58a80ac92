"""When a journal saves a snapshot of the state, and how it makes one."""

from __future__ import annotations

from agent_core import STATE_FORMAT, AgentState, StateEncoder, state_digest

from ._records import Snapshot, StoredInput

DEFAULT_SNAPSHOT_EVERY = 500
"""Inputs between snapshots (at least): bounds the fold on load to a few milliseconds."""

SNAPSHOT_BYTES_PER_INPUT = 2048
"""A snapshot of ``n`` bytes waits at least ``n / 2048`` inputs for the next one.

Writing a snapshot costs time in proportion to the state (about 230 ms for
21 MB at 100,000 inputs, measured by ``benchmarks/store.py``), so a fixed
interval would make appends slower as the session grows. With this spacing
snapshots cost a bounded share of appending, and the fold on load stays in
proportion to the snapshot's own load time.
"""


class SnapshotSchedule:
    """The journal's snapshots: the newest one's ``seq`` (``last``) and the ``seq`` from which the next is due."""

    __slots__ = ("every", "last", "next")

    def __init__(self, every: int, last: int) -> None:
        self.every = max(1, every)
        self.last = last
        self.next = last + self.every

    def taken(self, snapshot: Snapshot) -> None:
        """``snapshot`` is saved (or on its way): the next waits ``every`` inputs, more for a large state."""
        self.last = snapshot.seq
        self.next = snapshot.seq + max(self.every, len(snapshot.data) // SNAPSHOT_BYTES_PER_INPUT)


def take_snapshot(state: AgentState, seq: int, anchor: bytes, encoder: StateEncoder) -> Snapshot:
    """``state`` (the state after input ``seq``, whose chain hash is ``anchor``) as a snapshot record.

    ``encoder``: the session's own, kept from one snapshot to the next, so that only the tool-call records
    changed since the last one are encoded again (the bytes are those of ``encode_state``).
    """
    data = encoder.encode(state)
    return Snapshot(seq=seq, schema_version=STATE_FORMAT, state_hash=state_digest(data), data=data, anchor=anchor)


def disagreement(snapshot: Snapshot, record: StoredInput) -> str:
    """Why ``snapshot`` is not the state after ``record`` (the log's record ``snapshot.seq``); ``""``: nothing says so.

    Its anchor names another chain hash (the state of another history of the
    session), or the record recorded another state hash.
    """
    if snapshot.anchor is not None and snapshot.anchor != record.hash:
        return (
            f"it follows another history of the session (its record {record.seq} has chain hash "
            f"{snapshot.anchor.hex()}, the log's has {record.hash.hex()})"
        )
    if record.state_hash is not None and record.state_hash != snapshot.state_hash:
        return (
            f"its state hash {snapshot.state_hash.hex()} is not the one the log recorded at record {record.seq} "
            f"({record.state_hash.hex()})"
        )
    return ""
