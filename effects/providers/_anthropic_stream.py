"""Reading Anthropic's messages-API event stream into a :class:`~effects.ModelReply`.

Events: ``message_start`` (input tokens), ``content_block_start`` (a text,
``tool_use``, ``thinking`` or ``redacted_thinking`` block), ``content_block_delta``
(``text_delta`` to ``on_text``, ``input_json_delta`` pieces of a call's
arguments, ``thinking_delta`` and ``signature_delta`` pieces of a thinking
block), ``message_delta`` (stop reason, cumulative counts). Other events and
block kinds (``ping``...) are skipped. The SDK builds its event objects without
checking them, so each event the fold reads is validated here against the
fields it uses: a wrong shape raises :class:`msgspec.ValidationError` saying
what and where. A block index that starts a second block is refused the same
way (a second call there would silently replace the first).

Thinking blocks are kept byte for byte as provider items (``thinking``: the
text and its signature; ``redacted-thinking``: the encrypted ``data``), in
block order with ``text`` and ``tool-call`` markers, so the adapter can send
them back exactly where they stood.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

import msgspec

from agent_core import TEXT_MARKER, TOOL_CALL_MARKER, ProviderItem, Usage

from .._model import ModelReply, ModelToolCall, TextSink
from ._finish import Tokens
from ._limits import AnswerSize, StreamLimits
from ._timeline import item_json

_S = TypeVar("_S", bound=msgspec.Struct)

PROVIDER_ID = "anthropic"
"""The ``provider`` of the items this adapter keeps and sends back."""


class _Kind(msgspec.Struct):
    type: str


class _Details(msgspec.Struct):
    thinking_tokens: Tokens | None = None


class _Usage(msgspec.Struct):
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    cache_creation_input_tokens: Tokens | None = None
    cache_read_input_tokens: Tokens | None = None
    output_tokens_details: _Details | None = None

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


class _Thinking(msgspec.Struct):
    thinking: str = ""
    signature: str = ""


class _Redacted(msgspec.Struct):
    data: str


class _JsonPiece(msgspec.Struct):
    partial_json: str


class _Signature(msgspec.Struct):
    signature: str


_BLOCKS: dict[str, type[msgspec.Struct]] = {
    "tool_use": _ToolUse,
    "text": _Text,
    "thinking": _Thinking,
    "redacted_thinking": _Redacted,
}
_DELTAS: dict[str, type[msgspec.Struct]] = {
    "text_delta": _Text,
    "input_json_delta": _JsonPiece,
    "thinking_delta": _Thinking,
    "signature_delta": _Signature,
}


def _shaped(value: object, shapes: Mapping[str, type[_S]], where: str) -> _S | None:
    """``value`` (the event's field ``where``) validated as the shape its ``type`` names, or None for a kind
    the fold skips. A wrong shape's message gives the path from the event, as for the event's own fields."""
    try:
        shape = shapes.get(msgspec.convert(value, _Kind, from_attributes=True).type)
        return None if shape is None else msgspec.convert(value, shape, from_attributes=True)
    except msgspec.ValidationError as error:
        raise _at(error, where) from None


def _at(error: msgspec.ValidationError, where: str) -> msgspec.ValidationError:
    text = str(error)
    path = text.replace(" - at `$", f" - at `$.{where}", 1) if " - at `$" in text else f"{text} - at `$.{where}`"
    return msgspec.ValidationError(path)


class _Blocks:
    """The reply's content blocks by index: text pieces, calls (id, name, input, JSON pieces), thinking."""

    __slots__ = ("kinds", "parts")

    def __init__(self) -> None:
        self.kinds: dict[int, str] = {}
        self.parts: dict[int, list[str]] = {}

    def start(self, index: int, block: msgspec.Struct) -> None:
        if index in self.kinds:
            raise _at(
                msgspec.ValidationError(f"Expected a new block index, got {index}, which already started a block"),
                "index",
            )
        if isinstance(block, _ToolUse):
            self.kinds[index] = "tool_use"
            self.parts[index] = [block.id, block.name, json.dumps(block.input) if block.input else "{}"]
        elif isinstance(block, _Text):
            self.kinds[index] = "text"
            self.parts[index] = [block.text] if block.text else []
        elif isinstance(block, _Thinking):
            self.kinds[index] = "thinking"
            self.parts[index] = [block.signature, block.thinking]
        elif isinstance(block, _Redacted):
            self.kinds[index] = "redacted_thinking"
            self.parts[index] = [block.data]

    def add(self, index: int, piece: msgspec.Struct) -> bool:
        """Add a delta to its block; whether it was text of the answer (a text delta without a block starts one)."""
        kind = self.kinds.get(index)
        if isinstance(piece, _Text) and kind is None:
            self.kinds[index], self.parts[index], kind = "text", [], "text"
        if isinstance(piece, _Text) and kind == "text":
            self.parts[index].append(piece.text)
        elif isinstance(piece, _JsonPiece) and kind == "tool_use":
            self.parts[index].append(piece.partial_json)
        elif isinstance(piece, _Thinking) and kind == "thinking":
            self.parts[index].append(piece.thinking)
        elif isinstance(piece, _Signature) and kind == "thinking":
            self.parts[index][0] += piece.signature
        return kind == "text"

    def calls(self) -> tuple[ModelToolCall, ...]:
        return tuple(
            ModelToolCall(id=slot[0], name=slot[1], arguments="".join(slot[3:]) or slot[2])
            for index, slot in sorted(self.parts.items())
            if self.kinds[index] == "tool_use"
        )

    def items(self, model: str) -> tuple[ProviderItem, ...]:
        """The blocks as provider items in order, or none when no block needs to go back."""
        kinds = self.kinds
        if not any(kind in ("thinking", "redacted_thinking") for kind in kinds.values()):
            return ()
        items = []
        for index in sorted(kinds):
            slot, kind = self.parts[index], kinds[index]
            if kind == "thinking":
                block = {"type": "thinking", "thinking": "".join(slot[1:]), "signature": slot[0]}
                items.append(ProviderItem(kind="thinking", provider=PROVIDER_ID, model=model, data=item_json(block)))
            elif kind == "redacted_thinking":
                block = {"type": "redacted_thinking", "data": slot[0]}
                data = item_json(block)
                items.append(ProviderItem(kind="redacted-thinking", provider=PROVIDER_ID, model=model, data=data))
            elif kind == "text":
                chars = sum(len(piece) for piece in slot)
                items.append(ProviderItem(kind=TEXT_MARKER, provider=PROVIDER_ID, model=model, chars=chars))
            else:
                items.append(ProviderItem(kind=TOOL_CALL_MARKER, provider=PROVIDER_ID, model=model, ref=slot[0]))
        return tuple(items)


async def read_events(
    stream: AsyncIterator[Any], on_text: TextSink, model: str = "", size: AnswerSize | None = None
) -> ModelReply:
    """Fold a messages-API event stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``.

    ``finish_reason`` (the stop reason) stays empty when no ``message_delta``
    carried one (a stream cut off). ``model`` names the items' model. ``size`` counts what the reply keeps
    (:class:`StreamTooLarge` past its limit).
    """
    size = size or AnswerSize(StreamLimits().answer_chars)
    text: list[str] = []
    blocks = _Blocks()
    usage = _Usage()
    stop = ""
    async for event in stream:
        kind = msgspec.convert(event, _Kind, from_attributes=True).type
        if kind == "content_block_start":
            start = msgspec.convert(event, _BlockStart, from_attributes=True)
            block = _shaped(start.content_block, _BLOCKS, "content_block")
            if block is not None:
                size.add(len(msgspec.json.encode(block)))
                blocks.start(start.index, block)
                if isinstance(block, _Text) and block.text:
                    text.append(block.text)
                    on_text(block.text)
        elif kind == "content_block_delta":
            delta = msgspec.convert(event, _BlockDelta, from_attributes=True)
            piece = _shaped(delta.delta, _DELTAS, "delta")
            if piece is not None:
                size.add(sum(len(text) for text in msgspec.structs.astuple(piece)))
            if piece is not None and blocks.add(delta.index, piece) and isinstance(piece, _Text) and piece.text:
                text.append(piece.text)
                on_text(piece.text)
        elif kind == "message_start":
            usage = msgspec.convert(event, _MessageStart, from_attributes=True).message.usage
        elif kind == "message_delta":  # counts here are cumulative
            change = msgspec.convert(event, _MessageDelta, from_attributes=True)
            stop = change.delta.stop_reason or stop
            usage = _merged(usage, change.usage)
    return ModelReply(
        text="".join(text),
        tool_calls=blocks.calls(),
        usage=_usage(usage),
        finish_reason=stop,
        items=blocks.items(model),
    )


def _merged(start: _Usage, delta: _Usage) -> _Usage:
    """The counts of ``message_start`` updated by a ``message_delta`` (whose counts are cumulative)."""
    if delta.input_tokens is None:
        delta = msgspec.structs.replace(
            delta,
            input_tokens=start.input_tokens,
            cache_creation_input_tokens=start.cache_creation_input_tokens,
            cache_read_input_tokens=start.cache_read_input_tokens,
        )
    if delta.output_tokens_details is None:
        delta = msgspec.structs.replace(delta, output_tokens_details=start.output_tokens_details)
    return delta


def _usage(usage: _Usage) -> Usage:
    details = usage.output_tokens_details
    return Usage(
        input_tokens=usage.inputs(),
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
        # At most the total (as the API documents it); a server saying more is not trusted beyond the total.
        reasoning_tokens=min((details.thinking_tokens or 0) if details else 0, usage.output_tokens or 0),
    )
