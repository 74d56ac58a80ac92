"""Reading Anthropic's messages-API event stream into a :class:`~effects.ModelReply`.

Events: ``message_start`` (input tokens), ``content_block_start`` (a text
block, or a ``tool_use`` block with its id and name), ``content_block_delta``
(``text_delta`` to ``on_text``, ``input_json_delta`` pieces of a call's
arguments), ``message_delta`` (stop reason, cumulative output tokens). Other
events and block kinds (``ping``, thinking blocks...) are skipped. The SDK
builds its event objects without checking them, so each event the fold reads
is validated here against the fields it uses: a wrong shape raises
:class:`msgspec.ValidationError` saying what and where.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

import msgspec

from agent_core import Usage

from .._model import ModelReply, ModelToolCall, TextSink
from ._finish import Tokens

_S = TypeVar("_S", bound=msgspec.Struct)


class _Kind(msgspec.Struct):
    type: str


class _Usage(msgspec.Struct):
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    cache_creation_input_tokens: Tokens | None = None
    cache_read_input_tokens: Tokens | None = None

    def inputs(self) -> int:
        """All input tokens: fresh ones plus those written to and read from the prompt cache."""
        return (self.input_tokens or 0) + (self.cache_creation_input_tokens or 0) + (self.cache_read_input_tokens or 0)


class _Message(msgspec.Struct):
    usage: _Usage


class _MessageStart(msgspec.Struct):
    message: _Message


class _Stop(msgspec.Struct):
    stop_reason: str | None = None


class _MessageDelta(msgspec.Struct):
    delta: _Stop
    usage: _Usage


class _BlockStart(msgspec.Struct):
    index: int
    content_block: Any


class _BlockDelta(msgspec.Struct):
    index: int
    delta: Any


class _ToolUse(msgspec.Struct):
    id: str
    name: str
    input: Any = None


class _Text(msgspec.Struct):
    text: str


class _JsonPiece(msgspec.Struct):
    partial_json: str


_BLOCKS: dict[str, type[msgspec.Struct]] = {"tool_use": _ToolUse, "text": _Text}
_DELTAS: dict[str, type[msgspec.Struct]] = {"text_delta": _Text, "input_json_delta": _JsonPiece}


def _shaped(value: object, shapes: Mapping[str, type[_S]], where: str) -> _S | None:
    """``value`` (the event's field ``where``) validated as the shape its ``type`` names, or None for a kind
    the fold skips. A wrong shape's message gives the path from the event, as for the event's own fields."""
    try:
        shape = shapes.get(msgspec.convert(value, _Kind, from_attributes=True).type)
        return None if shape is None else msgspec.convert(value, shape, from_attributes=True)
    except msgspec.ValidationError as error:
        text = str(error)
        path = text.replace(" - at `$", f" - at `$.{where}", 1) if " - at `$" in text else f"{text} - at `$.{where}`"
        raise msgspec.ValidationError(path) from None


async def read_events(stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
    """Fold a messages-API event stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``.

    ``finish_reason`` (the stop reason) stays empty when no ``message_delta``
    carried one (a stream cut off).
    """
    text: list[str] = []
    uses: dict[int, list[str]] = {}  # block index -> [id, name, input from the start, JSON pieces...]
    input_tokens = output_tokens = 0
    stop = ""
    async for event in stream:
        kind = msgspec.convert(event, _Kind, from_attributes=True).type
        if kind == "content_block_start" or kind == "content_block_delta":
            at, where, shapes = _PARTS[kind]
            index, value = msgspec.structs.astuple(msgspec.convert(event, at, from_attributes=True))
            part = _shaped(value, shapes, where)
            if isinstance(part, _Text) and part.text:
                text.append(part.text)
                on_text(part.text)
            elif isinstance(part, _ToolUse):
                uses[index] = [part.id, part.name, json.dumps(part.input) if part.input else "{}"]
            elif isinstance(part, _JsonPiece) and index in uses:
                uses[index].append(part.partial_json)
        elif kind == "message_start":
            usage = msgspec.convert(event, _MessageStart, from_attributes=True).message.usage
            input_tokens, output_tokens = usage.inputs(), usage.output_tokens or 0
        elif kind == "message_delta":  # counts here are cumulative
            delta = msgspec.convert(event, _MessageDelta, from_attributes=True)
            stop = delta.delta.stop_reason or stop
            output_tokens = delta.usage.output_tokens or 0
            if delta.usage.input_tokens is not None:
                input_tokens = delta.usage.inputs()
    calls = tuple(
        ModelToolCall(id=slot[0], name=slot[1], arguments="".join(slot[3:]) or slot[2])
        for _, slot in sorted(uses.items())
    )
    usage_total = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ModelReply(text="".join(text), tool_calls=calls, usage=usage_total, finish_reason=stop)


_PARTS: dict[str, tuple[type[msgspec.Struct], str, dict[str, type[msgspec.Struct]]]] = {
    "content_block_start": (_BlockStart, "content_block", _BLOCKS),
    "content_block_delta": (_BlockDelta, "delta", _DELTAS),
}
