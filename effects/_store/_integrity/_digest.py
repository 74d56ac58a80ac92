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

import msgspec

from agent_core import AgentState, StateEncoder, Vector

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


def turn_digest(state: AgentState, encoder: StateEncoder | None = None) -> bytes:
    """32 bytes that change when the state's scalar parts, sizes or newest entries change.

    ``encoder`` (one the caller keeps from one state of a session to the
    next: a journal's, which its snapshots use too) encodes each of the newest
    tool-call records once, not at every turn end. The bytes are the same with
    or without it.
    """
    messages, log = state.messages, state.tool_call_log
    count, calls_count = len(messages), len(log)
    head: list[object] = [getattr(state, name) for name in _HEAD]
    for name in _LATER:
        value = getattr(state, name)
        if value != _DEFAULTS[name]:
            head.append([name, value])
    if encoder is None:
        encoder = StateEncoder(keep=RECENT_TOOL_CALLS)
    records = encoder.records(state, RECENT_TOOL_CALLS)
    document = (head, count, calls_count, list(messages[max(0, count - RECENT_MESSAGES) :]), records)
    return hashlib.sha256(_encoder.encode(document)).digest()
