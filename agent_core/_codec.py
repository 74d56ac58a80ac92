"""Codecs of inputs and logs: JSON or MessagePack, with upcasting of older logs.

Encoders and decoders are built once, here. Bytes are validated where they
enter (``decode_*``); inside, the types are trusted. A log's schema version is
the ``schema_version`` of its ``session-started`` (its first record); a store
keeps it with every row. Records of an older version pass through the
registered upcasters (``_upcast``), one version step at a time, before typed decoding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from ._encodable import MAX_TIMESTAMP_MS
from ._errors import DecodeError
from ._inputs import INPUT_TAGS, SCHEMA_VERSION, AgentInput
from ._upcast import Record, upcast

Format = Literal["json", "msgpack"]

json_encoder = msgspec.json.Encoder()
msgpack_encoder = msgspec.msgpack.Encoder()
_json_input = msgspec.json.Decoder(AgentInput)
_msgpack_input = msgspec.msgpack.Decoder(AgentInput)
_json_raw = msgspec.json.Decoder()
_msgpack_raw = msgspec.msgpack.Decoder()

UNREADABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError, OverflowError)
"""What decoding bytes may raise besides our own ``DecodeError``: msgspec's errors (validation included), text
that is not UTF-8, nesting deeper than the interpreter's stack, numbers too large. All become ``DecodeError``."""

_LONG_NUMBER = re.compile(rb"\d{20}")
"""20 digits in a row: maybe a number beyond 64 bits, which JSON carries but MessagePack (and so stores and
state hashes) cannot; such bytes are checked precisely (see :func:`fits_64_bits`)."""


# --- inputs ------------------------------------------------------------------------


def encode_input(inp: AgentInput, *, format: Format = "json") -> bytes:
    """One input as JSON (the public wire format, one object per input) or MessagePack."""
    return msgpack_encoder.encode(inp) if format == "msgpack" else json_encoder.encode(inp)


def decode_input(data: bytes, *, format: Format = "json", schema_version: int = SCHEMA_VERSION) -> AgentInput:
    """One input from bytes of ``schema_version``; raises :class:`DecodeError` naming the field path."""
    try:
        if schema_version == SCHEMA_VERSION:
            decoded: AgentInput = _msgpack_input.decode(data) if format == "msgpack" else _json_input.decode(data)
        else:
            raw = _msgpack_raw.decode(data) if format == "msgpack" else _json_raw.decode(data)
            decoded = _convert(upcast(_as_record(raw), schema_version))
    except UNREADABLE as error:
        raise decode_error(error) from None
    if format == "json":
        fits_64_bits(data, decoded)
    return decoded


def fits_64_bits(data: bytes, value: object, record: int | None = None, source: str = "") -> None:
    """Raise :class:`DecodeError` when ``value``, decoded from the JSON ``data``, holds an integer MessagePack
    cannot encode (beyond 64 bits). Cheap when ``data`` has no run of 20 digits, as nearly always."""
    if not _LONG_NUMBER.search(data):
        return
    try:
        msgpack_encoder.encode(value)
    except OverflowError:
        raise DecodeError(
            "a number is too large (integers must fit in 64 bits)", record=record, source=source
        ) from None


def _as_record(raw: Any) -> Record:
    if not isinstance(raw, dict):
        raise DecodeError(f"expected an object (an input), got {type(raw).__name__}")
    return raw


def _convert(record: Record) -> AgentInput:
    converted: AgentInput = msgspec.convert(record, AgentInput)
    return converted


_MSGSPEC_BAD_UTF8 = "Invalid UTF-8 encoded string"


def decode_error(error: Exception, record: int | None = None, source: str = "") -> DecodeError:
    """The :class:`DecodeError` for an error decoding raised (see :data:`UNREADABLE`), naming the field path."""
    if isinstance(error, RecursionError):
        text = "the data is nested too deeply to be an input (an input is an object a few levels deep)"
        return DecodeError(text, record=record, source=source)
    if isinstance(error, UnicodeDecodeError):  # msgspec before 0.23
        return DecodeError(f"a string is not valid UTF-8 ({error.reason})", record=record, source=source)
    if isinstance(error, msgspec.DecodeError) and str(error).startswith(_MSGSPEC_BAD_UTF8):  # msgspec 0.23 and later
        return DecodeError("a string is not valid UTF-8", record=record, source=source)
    if isinstance(error, OverflowError):
        return DecodeError(f"a number is out of range ({error})", record=record, source=source)
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
    return b"".join(json_encoder.encode(inp) + b"\n" for inp in inputs)


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
        except UNREADABLE:
            # Decode line by line only to name the bad record.
            inputs = [_decode_line(line, number, version, source) for number, line in _numbered(_lines(data))]
    else:
        inputs = [_decode_line(line, number, version, source) for number, line in _numbered(_lines(data))]
    if _LONG_NUMBER.search(data):
        lines = [line for _, line in _numbered(_lines(data))]
        for number, line, inp in zip(_line_numbers(data), lines, inputs, strict=True):
            fits_64_bits(line, inp, number, source)
    _check_times(data, inputs, source)
    return inputs


def _check_times(data: bytes, inputs: list[AgentInput], source: str) -> None:
    """Refuse a timestamp outside 0..:data:`MAX_TIMESTAMP_MS`, saying when it looks like another unit."""
    for index, inp in enumerate(inputs):
        at = inp.timestamp
        if 0 <= at <= MAX_TIMESTAMP_MS:
            continue
        unit = "nanoseconds" if at > 10**17 else "microseconds" if at > 10**14 else ""
        looks = f" (it looks like {unit})" if unit else ""
        raise DecodeError(
            f"timestamp {at} is not a time between 1970 and 9999 in milliseconds since the epoch{looks}; "
            "expected integer milliseconds, as every input carries",
            record=_line_numbers(data)[index],
            path="$.timestamp",
            source=source,
        )


def _line_numbers(data: bytes) -> list[int]:
    return [number for number, _ in _numbered(_lines(data))]


def _lines(data: bytes) -> list[bytes]:
    """A log's records: split at each newline only, as JSON lines are (and as msgspec's ``decode_lines`` reads
    them). A carriage return or another line break inside a record is JSON white space, not a new record."""
    return data.split(b"\n")


def _first_line(data: bytes) -> bytes | None:
    """The first non-blank line, without splitting the whole log."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if line.strip():
            return line
        start = end + 1
    return None


def _numbered(lines: list[bytes]) -> Iterable[tuple[int, bytes]]:
    return ((number, line) for number, line in enumerate(lines, start=1) if line.strip())


def _log_version(first: bytes, source: str) -> int:
    try:
        record = _json_raw.decode(first)
    except UNREADABLE as error:
        raise decode_error(error, 1, source) from None
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


def input_json_schema() -> dict[str, Any]:
    """The JSON Schema of the input union, for producers in other languages."""
    return msgspec.json.schema(AgentInput)
