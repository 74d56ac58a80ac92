"""The state's codec and hash: the state laid out as one document, encoded deterministically.

The document is built from the state's own fields: messages and tool-call
records (in request order) as arrays, the lookup indexes left out (rebuilt on
decoding), and every default value omitted, so a field added later with a
default leaves every existing document, and hash, as it was. :func:`state_digest` hashes the MessagePack
encoding: the one definition of a state's hash, which stores call too.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from itertools import islice
from typing import Any

import msgspec

from ._codec import UNREADABLE, Format, decode_error, fits_64_bits, json_encoder, msgpack_encoder
from ._config import AgentConfig, ToolDefinition
from ._errors import DecodeError
from ._state import AgentState, Message, ToolCallRecord
from ._table import keyed
from ._toolset import ToolSet
from ._vector import Vector
from ._workflow import WorkflowMove

STATE_FORMAT = 2
"""The version of the state's document (:func:`encode_state`, snapshots, :func:`state_hash`).

2: default values omitted, messages, tool calls and the workflow audit as arrays. A document of
another format is refused by :func:`decode_state` (a store ignores such a
snapshot and folds the log), never misread."""

# Derived from the state, or laid out as arrays; every other field is copied as it is.
_DERIVED = ("message_index", "tool_call_log")
_LAID_OUT = {"tools": tuple[ToolDefinition, ...], "messages": tuple[Message, ...]}
_LAID_OUT["tool_calls"] = tuple[ToolCallRecord, ...]
_LAID_OUT["audit"] = tuple[WorkflowMove, ...]


@functools.cache
def _document(state_type: type[AgentState]) -> tuple[type[msgspec.Struct], tuple[str, ...]]:
    """The document type of a state type, and the fields copied as they are.

    Built from the state's own fields, so a field added to the state is in the
    document; with its default value it is omitted, and every hash stays the same.
    """
    fields: list[tuple[str, Any, Any]] = [("format", int, msgspec.NODEFAULT)]
    as_is = []
    for field in msgspec.structs.fields(state_type):
        if field.name in _DERIVED:
            continue
        if field.name in _LAID_OUT:
            fields.append((field.name, _LAID_OUT[field.name], ()))
        else:
            fields.append((field.name, field.type, field.default))
            as_is.append(field.name)
    doc = msgspec.defstruct("StateDocument", fields, kw_only=True, frozen=True, omit_defaults=True)
    return doc, tuple(as_is)


_StateDoc, _AS_IS = _document(AgentState)
_json_state = msgspec.json.Decoder(_StateDoc)
_msgpack_state = msgspec.msgpack.Decoder(_StateDoc)
_DEFAULT_CONFIG = AgentState().config


def _defaults(struct_type: type[msgspec.Struct]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (field.name, field.default if field.default_factory is msgspec.NODEFAULT else field.default_factory())
        for field in msgspec.structs.fields(struct_type)
    )


_CONFIG_DEFAULTS = _defaults(AgentConfig)
_RECORD_DEFAULTS = _defaults(ToolCallRecord)


def _set_fields(value: msgspec.Struct, defaults: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The fields of ``value`` that differ from their defaults, in declared order, as a mapping.

    Written as a Struct, it would not do: MessagePack gives a map of up to 15
    entries a one-byte header, and msgspec picks the header from the number of
    fields the Struct *declares*, before leaving out the defaults. A sixteenth
    field added with its default would change the header, so the hash, of every
    state holding such a value. A mapping's header counts what it holds, so the
    configuration and the tool-call records are written this way, and a field
    added to them with its default leaves every hash as it was.
    """
    return {name: field for name, default in defaults if (field := getattr(value, name)) != default}


def encode_state(state: AgentState, *, format: Format = "json") -> bytes:
    """The state's canonical document: deterministic (the same state gives the same bytes), default
    values omitted, ``messages`` and ``tool_calls`` (in request order) as arrays."""
    calls = state.tool_calls
    doc = _state_document(
        state, tuple(_set_fields(calls[call_id], _RECORD_DEFAULTS) for call_id in state.tool_call_log)
    )
    return msgpack_encoder.encode(doc) if format == "msgpack" else json_encoder.encode(doc)


def _state_document(state: AgentState, tool_calls: tuple[object, ...]) -> msgspec.Struct:
    """The document of ``state`` with its tool-call records laid out as ``tool_calls`` (mappings, or their encodings)."""
    doc_type, as_is = _document(type(state))
    values = {name: getattr(state, name) for name in as_is}
    if values["config"] == _DEFAULT_CONFIG:
        values["config"] = _DEFAULT_CONFIG  # omitted by identity, as msgspec compares Struct defaults
    else:
        values["config"] = _set_fields(values["config"], _CONFIG_DEFAULTS)
    return doc_type(
        format=STATE_FORMAT,
        tools=state.tools.definitions,
        messages=tuple(state.messages),
        tool_calls=tool_calls,
        audit=tuple(state.audit),
        **values,
    )


class StateEncoder:
    """Encodes successive states of one session as ``encode_state(state, format="msgpack")`` does, byte for
    byte, encoding each tool-call record once.

    A record is immutable, so one the next state still holds (the same
    object) encodes to the same bytes. Building each record's mapping is most
    of the cost of encoding a long session's state, so a journal that keeps
    one encoder for its snapshots (and for its turn digests, which cover the
    newest records: see :meth:`records`) pays for the records added or changed
    since, not for all of them again.

    It keeps each record's encoding by call id, with the record it encodes: the
    bytes the record takes in the document and about 100 bytes of objects, for
    every record of the last state it encoded, or with ``keep`` for about the
    ``keep`` newest to ``2 * keep`` newest (what a reader that only digests the
    newest records needs). An entry is used only for the very record it
    encodes, so calls from several threads at once each write the right bytes.
    """

    __slots__ = ("_keep", "_records")

    def __init__(self, keep: int | None = None) -> None:
        if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep <= 0):
            raise ValueError(f"StateEncoder: expected a positive int or None for keep, got {keep!r}")
        self._keep = keep
        self._records: dict[str, tuple[ToolCallRecord, msgspec.Raw]] = {}

    def __len__(self) -> int:
        """How many records' encodings it keeps now."""
        return len(self._records)

    def records(self, state: AgentState, newest: int | None = None) -> list[msgspec.Raw]:
        """The encodings of ``state``'s tool-call records in request order, as its document writes them (the
        fields that differ from their defaults, as a mapping); with ``newest``, of the ``newest`` newest only."""
        log, calls, kept = state.tool_call_log, state.tool_calls, self._records
        count = len(log)
        ids: Iterable[str] = log
        if newest is not None and newest < count:  # the newest, read from the end: no slice of the log is built
            ids = list(islice(reversed(log), newest))
            ids.reverse()
        encoded: list[msgspec.Raw] = []
        get, append = kept.get, encoded.append
        for call_id in ids:
            record, entry = calls[call_id], get(call_id)
            if entry is None or entry[0] is not record:
                raw = msgspec.Raw(msgpack_encoder.encode(_set_fields(record, _RECORD_DEFAULTS)))
                entry = kept[call_id] = (record, raw)
            append(entry[1])
        keep = self._keep
        if len(kept) > (count if keep is None else 2 * keep):  # records this session no longer holds, or too many
            bound = count if keep is None else min(count, keep)
            self._records = {
                call_id: entry for call_id in log[count - bound :] if (entry := kept.get(call_id)) is not None
            }  # replaced in one store: a call from another thread goes on with the old one
        return encoded

    def encode(self, state: AgentState) -> bytes:
        """``state`` as MessagePack: the bytes of :func:`encode_state` with ``format="msgpack"``."""
        return msgpack_encoder.encode(_state_document(state, tuple(self.records(state))))


def decode_state(data: bytes, *, format: Format = "json") -> AgentState:
    """A state written by :func:`encode_state`; raises :class:`DecodeError` on bad bytes or another format."""
    try:
        doc: Any = _msgpack_state.decode(data) if format == "msgpack" else _json_state.decode(data)
    except UNREADABLE as error:
        raise _outdated(error) from None
    if format == "json":
        fits_64_bits(data, doc)  # a state's hash encodes it as MessagePack
    if doc.format != STATE_FORMAT:
        raise DecodeError(
            f"expected a state document of format {STATE_FORMAT}, got format {doc.format}; "
            "rebuild the state by replaying the log"
        )
    return AgentState(
        tools=ToolSet(doc.tools),
        messages=Vector(doc.messages),
        message_index=keyed({message.id: i for i, message in enumerate(doc.messages)}),
        tool_calls=keyed({record.id: record for record in doc.tool_calls}),
        tool_call_log=Vector(record.id for record in doc.tool_calls),
        audit=Vector(doc.audit),
        **{name: getattr(doc, name) for name in _AS_IS},
    )


def _outdated(error: Exception) -> DecodeError:
    decode = decode_error(error)
    if "missing required field `format`" in str(error):
        return DecodeError(
            f"expected a state document of format {STATE_FORMAT}, got one written before formats were "
            "numbered (format 1); rebuild the state by replaying the log",
            path=decode.path,
        )
    return decode


def state_digest(state: AgentState | bytes) -> bytes:
    """The 32-byte SHA-256 digest behind :func:`state_hash`, of a state or of its MessagePack
    encoding (``encode_state(state, format="msgpack")``, when already at hand): equal states, equal digests."""
    data = state if isinstance(state, bytes) else encode_state(state, format="msgpack")
    return hashlib.sha256(data).digest()


def state_hash(state: AgentState) -> str:
    """A SHA-256 hex digest of the state's canonical encoding: equal states, equal hashes, in any process."""
    return state_digest(state).hex()
