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

from agent_core import TEXT_MARKER, TOOL_CALL_MARKER, ProviderItem, Usage

from .._model import ModelReply, ModelToolCall, TextSink
from ._finish import Tokens
from ._limits import AnswerSize, StreamLimits
from ._timeline import item_json

PROVIDER_ID = "openai-chat"
"""The ``provider`` of the items this adapter keeps and sends back."""


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


class _Reasoning(msgspec.Struct):
    """Reasoning streamed beside the answer, in a field the SDK does not declare (kept in its extra fields)."""

    reasoning_content: str | None = None
    reasoning: str | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _PromptDetails(msgspec.Struct):
    cached_tokens: Tokens | None = None


class _CompletionDetails(msgspec.Struct):
    reasoning_tokens: Tokens | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: Tokens | None = None
    completion_tokens: Tokens | None = None
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None

    def counts(self) -> Usage:
        """The usage; a breakdown a server reports beyond its total counts as the total."""
        prompt, completion = self.prompt_tokens or 0, self.completion_tokens or 0
        cached = self.prompt_tokens_details.cached_tokens if self.prompt_tokens_details else None
        reasoning = self.completion_tokens_details.reasoning_tokens if self.completion_tokens_details else None
        return Usage(
            input_tokens=prompt,
            output_tokens=completion,
            cache_read_tokens=min(cached or 0, prompt),
            reasoning_tokens=min(reasoning or 0, completion),
        )


class _Chunk(msgspec.Struct):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None


async def read_stream(
    stream: AsyncIterator[Any], on_text: TextSink, model: str = "", size: AnswerSize | None = None
) -> ModelReply:
    """Fold a chat-completion chunk stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``.

    Reasoning a server streams beside the answer (``reasoning_content``, as
    DeepSeek, vLLM and others send it, or ``reasoning``) is kept as a provider
    item of ``model``.

    ``finish_reason`` stays empty when no chunk carried one (a stream cut off).
    Raises :class:`msgspec.ValidationError` for a chunk of the wrong shape, and :class:`StreamTooLarge` when
    ``size`` counts past its limit.
    """
    size = size or AnswerSize(StreamLimits().answer_chars)
    text: list[str] = []
    reasoning: dict[str, list[str]] = {}  # the field the server named it by -> its pieces
    calls = _ToolCalls()
    usage = Usage()
    finish = ""
    async for item in stream:
        chunk = msgspec.convert(item, _Chunk, from_attributes=True)
        if chunk.usage is not None:
            usage = chunk.usage.counts()
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta or _Delta()
        piece = delta.content or delta.refusal
        if piece:
            size.add(len(piece))
            text.append(piece)
            on_text(piece)
        thought = _reasoning(item)
        if thought is not None:
            size.add(len(thought.reasoning_content or thought.reasoning or ""))
        if thought is not None and thought.reasoning_content:
            reasoning.setdefault("reasoning_content", []).append(thought.reasoning_content)
        elif thought is not None and thought.reasoning:
            reasoning.setdefault("reasoning", []).append(thought.reasoning)
        for part in delta.tool_calls or ():
            calls.add(part)
            function = part.function
            size.add(len(part.id or "") + (len(function.name or "") + len(function.arguments or "") if function else 0))
        if choice.finish_reason:
            finish = choice.finish_reason
    done = calls.done()
    answer = "".join(text)
    items = _items(reasoning, answer, done, model)
    return ModelReply(text=answer, tool_calls=done, usage=usage, finish_reason=finish, items=items)


def _reasoning(chunk: Any) -> _Reasoning | None:
    """The reasoning a chunk's delta carries, validated; read from the SDK object's extra fields, where it keeps
    what it does not declare (asking the object for an undeclared attribute would cost an exception a chunk)."""
    try:
        extra = chunk.choices[0].delta.model_extra
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    if not extra or ("reasoning_content" not in extra and "reasoning" not in extra):
        return None
    try:
        return msgspec.convert(extra, _Reasoning)
    except msgspec.ValidationError as error:
        raise msgspec.ValidationError(f"{error} - at `$.choices[0].delta`") from None


def _items(
    reasoning: dict[str, list[str]], text: str, calls: tuple[ModelToolCall, ...], model: str
) -> tuple[ProviderItem, ...]:
    """The reply's reasoning as a provider item (the field it came in and its text, as a JSON object), then where
    its text and calls stand; none without reasoning."""
    if not reasoning:
        return ()
    field = next(iter(reasoning))  # a server uses one name; the first one seen is kept
    data = item_json({field: "".join(reasoning[field])})
    items = [ProviderItem(kind="reasoning-content", provider=PROVIDER_ID, model=model, data=data)]
    if text:
        items.append(ProviderItem(kind=TEXT_MARKER, provider=PROVIDER_ID, model=model, chars=len(text)))
    items += [ProviderItem(kind=TOOL_CALL_MARKER, provider=PROVIDER_ID, model=model, ref=c.id) for c in calls]
    return tuple(items)


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
