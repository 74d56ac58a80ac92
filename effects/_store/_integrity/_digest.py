"""The turn digest: a cheap hash of a state, recorded where a turn ends.

:func:`agent_core.state_hash` encodes the whole state, so its cost grows with
the session: about 2 ms at 8,000 inputs and 44 ms at 100,000 (measured by
``benchmarks/store.py``). Paid at every turn end, verifying a long log would
take minutes. The digest covers every scalar part of the state (step, time,
counters, the open turn, the last outcome, queued messages), the sizes of its
collections, and their newest entries, so its cost does not grow with the
session. A reducer change that alters a turn shows up in that turn's digest;
one that alters older entries is caught by the full state hash recorded at
snapshot points.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from agent_core import AgentState, ToolCallRecord, Vector

RECENT_MESSAGES = 16
"""Newest messages the digest covers."""

RECENT_TOOL_CALLS = 64
"""Newest tool-call records the digest covers."""

# Every field but the collections (covered by size and newest entries) and the
# session's fixed settings: those of the state format's first release in their
# order, then each field added since as a ``[name, value]`` pair when it is not
# its default (so the digests stores already hold stay the same). Derived from
# the struct, so a new field is covered.
_SKIPPED = frozenset({"messages", "message_index", "tool_calls", "tool_call_log", "config", "tools"})
_FIRST = (
    "started",
    "session_id",
    "timestamp",
    "step",
    "turn",
    "turns",
    "last_outcome",
    "queued",
    "called_llm_at",
    "input_tokens",
    "output_tokens",
    "past_calls",
    "workflow_state",
    "audit",
)
_HEAD = tuple(name for name in AgentState.__struct_fields__ if name in _FIRST)
_DEFAULTS = {f.name: f.default for f in msgspec.structs.fields(AgentState)}
_LATER = tuple(name for name in AgentState.__struct_fields__ if name not in _SKIPPED and name not in _FIRST)


def _sequence(value: object) -> list[object]:
    """A :class:`agent_core.Vector` (the workflow audit) as the array a tuple of its items encodes to."""
    if isinstance(value, Vector):
        return list(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__} in a turn digest")


_encoder = msgspec.msgpack.Encoder(enc_hook=_sequence)

_RECORD_DEFAULTS = tuple((field.name, field.default) for field in msgspec.structs.fields(ToolCallRecord))

RecordCache = dict[str, tuple[ToolCallRecord, msgspec.Raw]]
"""Encoded tool-call records by call id, with the record each encodes: what :func:`turn_digest` reuses."""


def _record(record: ToolCallRecord) -> dict[str, Any]:
    """A record as the mapping of its fields that differ from their defaults, as the state's document writes it
    (see :func:`agent_core.encode_state`): a record declares more than 15 fields, so as a Struct its header, and
    every digest, would change with the number of fields it declares."""
    return {name: value for name, default in _RECORD_DEFAULTS if (value := getattr(record, name)) != default}


def turn_digest(state: AgentState, cache: RecordCache | None = None) -> bytes:
    """32 bytes that change when the state's scalar parts, sizes or newest entries change.

    ``cache`` (a dict the caller keeps from one state of a session to the
    next) holds the newest records' encodings: a record is immutable, so one
    the state still holds (the same object) is encoded once, not at every turn
    end. The bytes are the same with or without it.
    """
    messages, log, calls = state.messages, state.tool_call_log, state.tool_calls
    count, calls_count = len(messages), len(log)
    head: list[object] = [getattr(state, name) for name in _HEAD]
    for name in _LATER:
        value = getattr(state, name)
        if value != _DEFAULTS[name]:
            head.append([name, value])
    recent = log[max(0, calls_count - RECENT_TOOL_CALLS) :]  # one slice, not an index per entry
    if cache is None:
        records: list[object] = [_record(calls[call_id]) for call_id in recent]
    else:
        records = []
        for call_id in recent:  # a record the state still holds (the same object) was encoded before
            record, entry = calls[call_id], cache.get(call_id)
            if entry is None or entry[0] is not record:
                entry = cache[call_id] = (record, msgspec.Raw(_encoder.encode(_record(record))))
            records.append(entry[1])
        if len(cache) > 2 * RECENT_TOOL_CALLS:  # keep only the records the next digests may reuse
            kept = set(recent)
            for call_id in [call_id for call_id in cache if call_id not in kept]:
                del cache[call_id]
    document = (head, count, calls_count, list(messages[max(0, count - RECENT_MESSAGES) :]), records)
    return hashlib.sha256(_encoder.encode(document)).digest()
