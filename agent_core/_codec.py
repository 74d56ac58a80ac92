"""Codecs: inputs, logs and states as JSON or MessagePack, with upcasting of older logs.

Encoders and decoders are built once, here. Bytes are validated where they
enter (``decode_*``); inside, the types are trusted. A log's schema version is
the ``schema_version`` of its ``session-started`` (its first record); a store
keeps it with every row. Records of an older version pass through the
registered upcasters, one version step at a time, before typed decoding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

import msgspec
from immutables import Map

from ._config import AgentConfig, ToolDefinition
from ._errors import DecodeError
from ._inputs import INPUT_TAGS, SCHEMA_VERSION, AgentInput
from ._state import AgentState, Message, ToolCallRecord, Turn, TurnOutcome
from ._toolset import ToolSet

Format = Literal["json", "msgpack"]
Record = dict[str, Any]

_json_encoder = msgspec.json.Encoder()
_msgpack_encoder = msgspec.msgpack.Encoder()
_json_input = msgspec.json.Decoder(AgentInput)
_msgpack_input = msgspec.msgpack.Decoder(AgentInput)
_json_raw = msgspec.json.Decoder()
_msgpack_raw = msgspec.msgpack.Decoder()


# --- upcasters -------------------------------------------------------------------

UPCASTERS: dict[int, Callable[[Record], Record]] = {}
"""``UPCASTERS[v]`` turns one raw record of schema version ``v`` into version ``v + 1``."""


def upcaster(from_version: int) -> Callable[[Callable[[Record], Record]], Callable[[Record], Record]]:
    """Register a function that rewrites a raw record of ``from_version`` into the next version."""

    def register(function: Callable[[Record], Record]) -> Callable[[Record], Record]:
        UPCASTERS[from_version] = function
        return function

    return register


def upcast(record: Record, version: int) -> Record:
    """Bring a raw record from ``version`` up to :data:`SCHEMA_VERSION`."""
    if version > SCHEMA_VERSION:
        raise DecodeError(
            f"schema version {version} is newer than this release reads ({SCHEMA_VERSION}); upgrade agent-core"
        )
    while version < SCHEMA_VERSION:
        step = UPCASTERS.get(version)
        if step is None:
            raise DecodeError(f"no upcaster from schema version {version}; versions known: {sorted(UPCASTERS)}")
        record = step(record)
        version += 1
    return record


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


# Mappings whose keys are ids, not field names: renaming them would break the
# references to those ids in later records (e.g. "call_Ab9" in toolCallId).
_ID_KEYED = frozenset({"toolCalls", "tool_calls"})


def _snake(value: Any, ids: bool = False) -> Any:
    if isinstance(value, dict):
        return {
            (key if ids else _CAMEL.sub("_", key).lower()): _snake(item, not ids and key in _ID_KEYED)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_snake(item) for item in value]
    return value


@upcaster(0)
def _from_origin(record: Record) -> Record:
    """Version 0: logs of the origin prototype (Moorex's TypeScript agent-core-state-machine).

    Its fields were camelCase, tool results were ``{isSuccess, content|error}``
    and carried ``receivedAt``, and requests carried ``calledAt``.
    """
    record = _snake(record)
    # Only rewrite what has the expected shape; anything else is left for the
    # typed decoding to reject with a field path.
    if record.get("type") == "session-started":
        record["schema_version"] = 1
        config = record.get("config")
        if isinstance(config, dict) and "expand_context_window_size" in config:
            config["context_window_step"] = config.pop("expand_context_window_size")
    observation = record.get("observation")
    requests = observation.get("tool_calls") if isinstance(observation, dict) else None
    if isinstance(requests, dict):
        for request in requests.values():
            if isinstance(request, dict):
                request.pop("called_at", None)
    result = record.get("result")
    if isinstance(result, dict) and "is_success" in result:
        result.pop("received_at", None)
        result["status"] = "success" if result.pop("is_success") else "failure"
    return record


# --- inputs ------------------------------------------------------------------------


def encode_input(inp: AgentInput, *, format: Format = "json") -> bytes:
    """One input as JSON (the public wire format, one object per input) or MessagePack."""
    return _msgpack_encoder.encode(inp) if format == "msgpack" else _json_encoder.encode(inp)


def decode_input(data: bytes, *, format: Format = "json", schema_version: int = SCHEMA_VERSION) -> AgentInput:
    """One input from bytes of ``schema_version``; raises :class:`DecodeError` naming the field path."""
    try:
        if schema_version == SCHEMA_VERSION:
            decoded: AgentInput = _msgpack_input.decode(data) if format == "msgpack" else _json_input.decode(data)
            return decoded
        raw = _msgpack_raw.decode(data) if format == "msgpack" else _json_raw.decode(data)
        return _convert(upcast(_as_record(raw), schema_version))
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise _decode_error(error) from None


def _as_record(raw: Any) -> Record:
    if not isinstance(raw, dict):
        raise DecodeError(f"expected an object (an input), got {type(raw).__name__}")
    return raw


def _convert(record: Record) -> AgentInput:
    converted: AgentInput = msgspec.convert(record, AgentInput)
    return converted


def _decode_error(error: Exception, record: int | None = None, source: str = "") -> DecodeError:
    text = str(error)
    path = ""
    match = re.search(r" - at `([^`]*)`$", text)
    if match:
        path = match.group(1)
    if path == "$.type" or text.startswith("Object missing required field `type`"):
        text += f"; expected one of the input types: {', '.join(INPUT_TAGS)}"
    return DecodeError(text, record=record, path=path, source=source)


# --- logs (JSON lines) -----------------------------------------------------------


def encode_log(inputs: Iterable[AgentInput]) -> bytes:
    """A session's inputs as JSON lines, one input per line (the portable log format)."""
    return b"".join(_json_encoder.encode(inp) + b"\n" for inp in inputs)


def decode_log(data: bytes, *, source: str = "") -> list[AgentInput]:
    """Decode a JSON-lines log, upcasting it when its ``session-started`` declares an older schema.

    The first record must be ``session-started``. A bad record raises
    :class:`DecodeError` naming ``source`` (e.g. a file name), the 1-based
    record number and the field path.
    """
    first = _first_line(data)
    if first is None:
        raise DecodeError("the log is empty; expected a session-started record first", source=source)
    version = _log_version(first, source)
    if version == SCHEMA_VERSION:
        try:
            inputs: list[AgentInput] = _json_input.decode_lines(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            # Decode line by line only to name the bad record.
            inputs = [_decode_line(line, number, version, source) for number, line in _numbered(data.splitlines())]
    else:
        inputs = [_decode_line(line, number, version, source) for number, line in _numbered(data.splitlines())]
    return inputs


def _first_line(data: bytes) -> bytes | None:
    """The first non-blank line (as ``bytes.splitlines`` splits), without splitting the whole log."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        for line in data[start:end].splitlines():
            if line.strip():
                return line
        start = end + 1
    return None


def _numbered(lines: list[bytes]) -> Iterable[tuple[int, bytes]]:
    return ((number, line) for number, line in enumerate(lines, start=1) if line.strip())


def _log_version(first: bytes, source: str) -> int:
    try:
        record = _json_raw.decode(first)
    except msgspec.DecodeError as error:
        raise _decode_error(error, 1, source) from None
    if not isinstance(record, dict) or record.get("type") != "session-started":
        got = record.get("type") if isinstance(record, dict) else type(record).__name__
        raise DecodeError(
            f"a log must start with a session-started record, got {got!r}; "
            "is this an agent-core log (JSON lines, one input per line)?",
            record=1,
            source=source,
        )
    version = record.get("schema_version", record.get("schemaVersion", 1))
    if not isinstance(version, int):
        raise DecodeError(f"expected an integer schema_version, got {version!r}", record=1, source=source)
    return version


def _decode_line(line: bytes, number: int, version: int, source: str) -> AgentInput:
    try:
        return decode_input(line, schema_version=version)
    except DecodeError as error:
        raise DecodeError(error.detail, record=number, path=error.path, source=source) from None


# --- state ------------------------------------------------------------------------


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


def encode_state(state: AgentState, *, format: Format = "json") -> bytes:
    """The whole state, deterministically (the same state gives the same bytes)."""
    messages = state.messages
    log, calls = state.tool_call_log, state.tool_calls
    doc = _StateDoc(
        schema_version=SCHEMA_VERSION,
        started=state.started,
        session_id=state.session_id,
        config=state.config,
        tools=state.tools.definitions,
        timestamp=state.timestamp,
        step=state.step,
        messages=tuple(messages[i] for i in range(len(messages))),
        tool_calls=tuple(calls[log[i]] for i in range(len(log))),
        turn=state.turn,
        turns=state.turns,
        last_outcome=state.last_outcome,
        queued=state.queued,
        called_llm_at=state.called_llm_at,
        input_tokens=state.input_tokens,
        output_tokens=state.output_tokens,
    )
    return _msgpack_encoder.encode(doc) if format == "msgpack" else _json_encoder.encode(doc)


def decode_state(data: bytes, *, format: Format = "json") -> AgentState:
    """A state written by :func:`encode_state`; raises :class:`DecodeError` on bad bytes or another schema."""
    try:
        doc = _msgpack_state.decode(data) if format == "msgpack" else _json_state.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise _decode_error(error) from None
    if doc.schema_version != SCHEMA_VERSION:
        raise DecodeError(
            f"state of schema version {doc.schema_version} cannot be read by this release ({SCHEMA_VERSION}); "
            "rebuild it by replaying the log"
        )
    return AgentState(
        started=doc.started,
        session_id=doc.session_id,
        config=doc.config,
        tools=ToolSet(doc.tools),
        timestamp=doc.timestamp,
        step=doc.step,
        messages=Map(enumerate(doc.messages)),
        message_index=Map((message.id, i) for i, message in enumerate(doc.messages)),
        tool_calls=Map((record.id, record) for record in doc.tool_calls),
        tool_call_log=Map((i, record.id) for i, record in enumerate(doc.tool_calls)),
        turn=doc.turn,
        turns=doc.turns,
        last_outcome=doc.last_outcome,
        queued=doc.queued,
        called_llm_at=doc.called_llm_at,
        input_tokens=doc.input_tokens,
        output_tokens=doc.output_tokens,
    )


def state_hash(state: AgentState) -> str:
    """A SHA-256 hex digest of the state's canonical encoding: equal states, equal hashes, in any process."""
    return hashlib.sha256(encode_state(state, format="msgpack")).hexdigest()


def input_json_schema() -> dict[str, Any]:
    """The JSON Schema of the input union, for producers in other languages."""
    return msgspec.json.schema(AgentInput)
