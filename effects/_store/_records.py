"""What a store keeps: encoded inputs with their hash chain, snapshots, and session metadata."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from agent_core import AgentInput, decode_input

HASH_SIZE = 16
"""Bytes of each chain hash: SHA-256 truncated to 128 bits (enough to detect damage, half the disk)."""

GENESIS = bytes(HASH_SIZE)
"""The "previous hash" of a session's first record."""


def chain_hash(previous: bytes, data: bytes) -> bytes:
    """The hash of a record: ``SHA-256(previous hash + input bytes)``, truncated to :data:`HASH_SIZE`.

    Each record's hash depends on every record before it, so a changed,
    missing or reordered record breaks the chain at its own number.
    """
    return hashlib.sha256(previous + data).digest()[:HASH_SIZE]


# gc=False: records hold only numbers and bytes (no cycle is possible), and many are alive while a group commits;
# the garbage collector need not track them.
class StoredInput(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One record of a session's log.

    ``seq`` is the 1-based position (``session-started`` is 1; the state after
    record ``n`` has ``step == n``). ``data`` is the input as MessagePack, of
    schema ``schema_version`` (older rows are upcast when read). ``hash`` is
    the chain hash. ``turn_digest`` is set where a turn ended and
    ``state_hash`` (the full :func:`agent_core.state_hash`, as 32 bytes) at
    snapshot points: replay compares them to detect a changed reducer.
    """

    seq: int
    schema_version: int
    data: bytes
    hash: bytes
    turn_digest: bytes | None = None
    state_hash: bytes | None = None

    def decode(self) -> AgentInput:
        """The input, upcast to the current schema; raises :class:`agent_core.DecodeError` on bad bytes."""
        return decode_input(self.data, format="msgpack", schema_version=self.schema_version)


class Snapshot(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A cached state after record ``seq``: ``data`` is :func:`agent_core.encode_state` as MessagePack.

    ``schema_version`` is the state document's format (:data:`agent_core.STATE_FORMAT`),
    not the log's schema. ``anchor`` is the chain hash of record ``seq`` of the history
    the state was folded from (a journal sets it): the snapshot is used only while the
    log's record ``seq`` has that hash, so the state of another history (a batch the
    store refused, a session forked or written again) is never loaded. ``None`` (a
    snapshot of an older release, or of a store that does not keep it) is used when
    its state hash agrees with the one record ``seq`` recorded, if it recorded one.
    A snapshot is only a cache: one of another format, whose bytes do not hash to
    ``state_hash``, or of another history, is ignored and the log is folded instead.
    """

    seq: int
    schema_version: int
    state_hash: bytes
    data: bytes
    anchor: bytes | None = None


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """Where a forked session came from: the parent session and the last record it copied."""

    session_id: str
    seq: int


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A session as a store lists it.

    ``length`` is its number of inputs, ``head`` the hash of its last record,
    ``first_timestamp``/``last_timestamp`` the times of its first and last
    inputs (ms since the epoch), ``parent`` where it was forked from, if it was.
    """

    session_id: str
    length: int
    head: bytes
    first_timestamp: int = 0
    last_timestamp: int = 0
    parent: Origin | None = None


def session_info(row: Any) -> SessionInfo:
    """A :class:`SessionInfo` from a row ``(name, length, head, first, last, parent, parent_seq)`` of a SQL store."""
    name, length, head, first, last, parent, parent_seq = row
    origin = None if parent is None else Origin(session_id=parent, seq=parent_seq)
    return SessionInfo(
        session_id=name, length=length, head=head, first_timestamp=first, last_timestamp=last, parent=origin
    )


class _Stamp(msgspec.Struct):
    timestamp: int = 0


_stamp = msgspec.msgpack.Decoder(_Stamp)


def timestamp_of(data: bytes) -> int:
    """The ``timestamp`` of an encoded input, without decoding the rest (0 when unreadable)."""
    try:
        return _stamp.decode(data).timestamp
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0


class Append(msgspec.Struct, frozen=True, gc=False):
    """One job of a store's group writer: a session's records (if any) and a snapshot taken at the last of them.

    ``lease`` is the owner token of the writer's lease (``None``: a writer without one, checked by length alone).
    """

    session_id: str
    records: Sequence[StoredInput]
    expected: int
    parent: Origin | None = None
    snapshot: Snapshot | None = None
    lease: str | None = None


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    """The lease on one session's writing, as the store records it.

    ``owner`` is a random token of one opener (every append of that writer
    carries it, and the store refuses an append whose token is no longer the
    session's: *fencing*); ``holder`` says who it is (``pid 4242 on web-1``);
    ``acquired_at`` and ``expires_at`` are ms since the epoch on the store's
    clock. A live writer renews it well before it expires; another writer may
    take the session over only once it has, or at once when the holder is a
    process of the same machine that no longer exists: ``host`` names the
    machine (its host name, boot and process namespace; ``""`` where they
    cannot be known) and ``pid`` the process.
    """

    session_id: str
    owner: str
    holder: str
    acquired_at: int
    expires_at: int
    host: str = ""
    pid: int = 0
