"""Reading an OpenAI-compatible chat-completion chunk stream into a :class:`~effects.ModelReply`.

The SDK builds its chunk objects without checking them, so every chunk is
validated here, where it enters, against the few fields the fold reads
(:func:`msgspec.convert` from the objects' attributes): a server that sends a
number where text belongs, a negative or fractional token count, or a list
where a chunk belongs raises :class:`msgspec.ValidationError` saying what and
where, which the adapter reports as a malformed stream. A ``null`` token
count (some compatible servers send one) counts as 0.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from agent_core import Usage

from .._model import ModelReply, ModelToolCall, TextSink
from ._finish import Tokens


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallPart(msgspec.Struct):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCallPart] | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: Tokens | None = None
    completion_tokens: Tokens | None = None


class _Chunk(msgspec.Struct):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None


async def read_stream(stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
    """Fold a chat-completion chunk stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``.

    ``finish_reason`` stays empty when no chunk carried one (a stream cut off).
    Raises :class:`msgspec.ValidationError` for a chunk of the wrong shape.
    """
    text: list[str] = []
    calls = _ToolCalls()
    usage = Usage()
    finish = ""
    async for item in stream:
        chunk = msgspec.convert(item, _Chunk, from_attributes=True)
        if chunk.usage is not None:
            usage = Usage(input_tokens=chunk.usage.prompt_tokens or 0, output_tokens=chunk.usage.completion_tokens or 0)
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta or _Delta()
        piece = delta.content or delta.refusal
        if piece:
            text.append(piece)
            on_text(piece)
        for part in delta.tool_calls or ():
            calls.add(part)
        if choice.finish_reason:
            finish = choice.finish_reason
    return ModelReply(text="".join(text), tool_calls=calls.done(), usage=usage, finish_reason=finish)


class _ToolCalls:
    """Tool calls accumulated from deltas: by ``index`` as OpenAI sends them, and robust to servers that
    omit the index (a part with a new id starts a call, one without continues the last) or repeat index 0
    for every call (a different id starts a new call)."""

    __slots__ = ("by_index", "slots")

    def __init__(self) -> None:
        self.slots: list[list[str]] = []  # [id, name, argument pieces...] in the order calls began
        self.by_index: dict[int, int] = {}

    def add(self, part: _ToolCallPart) -> None:
        index, call_id = part.index, part.id or ""
        position = self.by_index.get(index) if index is not None else len(self.slots) - 1
        if position is None or position < 0 or (call_id and self.slots[position][0] not in ("", call_id)):
            position = len(self.slots)
            self.slots.append(["", ""])
            if index is not None:
                self.by_index[index] = position
        slot = self.slots[position]
        slot[0] = slot[0] or call_id
        if part.function is not None:
            slot[1] = slot[1] or part.function.name or ""
            if part.function.arguments:
                slot.append(part.function.arguments)

    def done(self) -> tuple[ModelToolCall, ...]:
        return tuple(
            ModelToolCall(id=slot[0] or f"call_{uuid.uuid4().hex}", name=slot[1], arguments="".join(slot[2:]) or "{}")
            for slot in self.slots
        )
