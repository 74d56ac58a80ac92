"""The state's codec and hash: the state laid out as one document, encoded deterministically.

The persistent maps of :class:`AgentState` are laid out as ordered sequences
(messages by position, tool-call records in request order); the lookup
indexes are rebuilt on decoding. :func:`state_digest` hashes the MessagePack
encoding: the one definition of a state's hash, which stores call too.
"""

from __future__ import annotations

import hashlib

import msgspec
from immutables import Map

from ._codec import Format, decode_error, json_encoder, msgpack_encoder
from ._config import AgentConfig, ToolDefinition
from ._errors import DecodeError
from ._inputs import SCHEMA_VERSION
from ._state import AgentState, Message, ToolCallRecord, Turn, TurnOutcome
from ._toolset import ToolSet


class _StateDoc(msgspec.Struct, frozen=True, kw_only=True):
    """The state with its persistent maps laid out as ordered sequences."""

    schema_version: int
    started: bool
    session_id: str
    config: AgentConfig
    tools: tuple[ToolDefinition, ...]
    timestamp: int
    step: int
    messages: tuple[Message, ...]
    tool_calls: tuple[ToolCallRecord, ...]
    turn: Turn | None
    turns: int
    last_outcome: TurnOutcome | None
    queued: tuple[Message, ...]
    called_llm_at: int
    input_tokens: int
    output_tokens: int


_json_state = msgspec.json.Decoder(_StateDoc)
_msgpack_state = msgspec.msgpack.Decoder(_StateDoc)

# Laid out differently in the document; every other field is copied as it is.
_LAID_OUT = ("schema_version", "tools", "messages", "tool_calls")
_AS_IS = tuple(name for name in _StateDoc.__struct_fields__ if name not in _LAID_OUT)


def encode_state(state: AgentState, *, format: Format = "json") -> bytes:
    """The whole state, deterministically (the same state gives the same bytes)."""
    messages = state.messages
    log, calls = state.tool_call_log, state.tool_calls
    doc = _StateDoc(
        schema_version=SCHEMA_VERSION,
        tools=state.tools.definitions,
        messages=tuple(messages[i] for i in range(len(messages))),
        tool_calls=tuple(calls[log[i]] for i in range(len(log))),
        **{name: getattr(state, name) for name in _AS_IS},
    )
    return msgpack_encoder.encode(doc) if format == "msgpack" else json_encoder.encode(doc)


def decode_state(data: bytes, *, format: Format = "json") -> AgentState:
    """A state written by :func:`encode_state`; raises :class:`DecodeError` on bad bytes or another schema."""
    try:
        doc = _msgpack_state.decode(data) if format == "msgpack" else _json_state.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise decode_error(error) from None
    if doc.schema_version != SCHEMA_VERSION:
        raise DecodeError(
            f"state of schema version {doc.schema_version} cannot be read by this release ({SCHEMA_VERSION}); "
            "rebuild it by replaying the log"
        )
    return AgentState(
        tools=ToolSet(doc.tools),
        messages=Map(enumerate(doc.messages)),
        message_index=Map((message.id, i) for i, message in enumerate(doc.messages)),
        tool_calls=Map((record.id, record) for record in doc.tool_calls),
        tool_call_log=Map((i, record.id) for i, record in enumerate(doc.tool_calls)),
        **{name: getattr(doc, name) for name in _AS_IS},
    )


def state_digest(state: AgentState | bytes) -> bytes:
    """The 32-byte SHA-256 digest behind :func:`state_hash`, of a state or of its MessagePack
    encoding (``encode_state(state, format="msgpack")``, when already at hand): equal states, equal digests."""
    data = state if isinstance(state, bytes) else encode_state(state, format="msgpack")
    return hashlib.sha256(data).digest()


def state_hash(state: AgentState) -> str:
    """A SHA-256 hex digest of the state's canonical encoding: equal states, equal hashes, in any process."""
    return state_digest(state).hex()
