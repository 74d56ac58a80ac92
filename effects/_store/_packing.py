"""How SQLite rows hold bytes: small records are deflated against a fixed dictionary.

Most of a small MessagePack input is field names and tags (``tool_call_id``,
``"tool-call-completed"``). Deflate with a preset dictionary of those strings
halves a typical log; a record that would not shrink is kept as it is. The
codec number is stored with each row, and a dictionary, once released, never
changes: a new one would get a new codec number.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from ._records import Snapshot, StoredInput

RAW = 0
"""Row codec: the bytes as they are."""

DEFLATE_1 = 1
"""Row codec: raw deflate against :data:`_DICTIONARY_1`."""

ZLIB = 2
"""Row codec: plain zlib (with its checksum), for snapshots."""

# Frozen forever (see the module docstring). Rarer strings first: deflate
# reaches the end of the dictionary with the shortest distances.
_WORDS_1 = (
    "session-started", "session_id", "schema_version", "config", "tools", "description", "requires_approval",
    "idempotent", "timeout_ms", "system_prompt", "context-window-expanded", "history-tool-calls-added",
    "tool_call_ids", "timer-fired", "re-act-cancelled", "reason", "tool-call-approved", "tool-call-denied",
    "llm-call-failed", "error", "retryable", "retry_after_ms", "failure", "user-message-received",
    "llm-message-started", "llm-message-completed", "message_id", "content", "complete-re-act",
    "continue-re-act", "re-act-observed", "called_llm_at", "observation", "usage", "input_tokens",
    "output_tokens", "tool_calls", "name", "parameters", "tool-call-started", "tool-call-completed",
    "result", "status", "success", "tool_call_id", "type", "timestamp",
)  # fmt: skip
_DICTIONARY_1 = b"".join(msgspec.msgpack.encode(word) for word in _WORDS_1)

_SMALL = 1024  # below this a 1 KiB window is enough, and much cheaper to set up per row


def _compressor(wbits: int, mem_level: int) -> Any:
    return zlib.compressobj(6, zlib.DEFLATED, wbits, mem_level, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1)


# A store's writer packs every record of a group while holding the interpreter's lock between zlib calls, so
# the event loop waits for that work. Setting up a compressor (tables, then the dictionary hashed in) cost more
# than compressing a small record; a small record copies one set up once instead. Its tables are sized for
# the small window (a memory level of 2: 1 KiB of hash heads, not 64 KiB to clear per record); a copy starts
# from the same state, so a record's bytes never depend on the records packed before it.
_SMALL_TEMPLATE = _compressor(-10, 2)


def pack(data: bytes) -> tuple[int, bytes]:
    """``(codec, bytes)`` for one record: deflated when that is smaller."""
    compressor = _SMALL_TEMPLATE.copy() if len(data) < _SMALL else _compressor(-15, 8)
    packed = compressor.compress(data) + compressor.flush()
    return (DEFLATE_1, packed) if len(packed) < len(data) else (RAW, data)


def pack_snapshot(data: bytes) -> tuple[int, bytes]:
    """``(codec, bytes)`` for a snapshot: zlib at its fastest level (a snapshot is written every N inputs)."""
    return ZLIB, zlib.compress(data, 1)


def unpack(codec: int, packed: bytes) -> bytes:
    """The bytes :func:`pack` or :func:`pack_snapshot` were given; ``ValueError`` if they cannot be restored."""
    if codec == RAW:
        return packed
    try:
        if codec == DEFLATE_1:
            decompressor = zlib.decompressobj(-15, zdict=_DICTIONARY_1)
            data = decompressor.decompress(packed)
            if not decompressor.eof:
                raise ValueError("the compressed record is truncated")
            return data
        if codec == ZLIB:
            return zlib.decompress(packed)
    except zlib.error as error:
        raise ValueError(f"the compressed record is damaged ({error})") from None
    raise ValueError(f"unknown row codec {codec}; expected 0, 1 or 2 (was the store written by a newer release?)")


def stored_input(row: tuple[Any, ...]) -> StoredInput:
    """A record from a SQL row ``(seq, version, codec, data, hash, turn_digest, state_hash)``.

    Bytes that cannot be restored become ``b""``: the hash chain check then names the record as damaged.
    """
    seq, version, codec, packed, digest, turn_digest, state_hash = row
    try:
        data = unpack(codec, packed)
    except ValueError:
        data = b""
    return StoredInput(
        seq=seq, schema_version=version, data=data, hash=digest, turn_digest=turn_digest, state_hash=state_hash
    )


def stored_snapshot(row: tuple[Any, ...] | None) -> Snapshot | None:
    """A snapshot from a SQL row ``(seq, version, state_hash, codec, data, anchor)``; ``None`` for no row or bytes
    that cannot be restored (a snapshot is a cache: a damaged one only costs a longer fold)."""
    if row is None:
        return None
    seq, version, state_hash, codec, packed, anchor = row
    try:
        data = unpack(codec, packed)
    except ValueError:
        return None
    anchor = None if anchor is None else bytes(anchor)
    return Snapshot(seq=seq, schema_version=version, state_hash=bytes(state_hash), data=data, anchor=anchor)
