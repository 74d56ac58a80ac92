"""Reading OpenAI's Responses-API event stream into a :class:`~effects.ModelReply`.

Events: ``response.output_item.added`` / ``.done`` (each output item: a
message, a function call, a reasoning item, a compaction item...; ``done``
carries the item whole), ``response.output_text.delta`` and
``response.refusal.delta`` (text to ``on_text``),
``response.function_call_arguments.delta`` (a call's arguments in pieces),
``response.completed`` / ``response.incomplete`` (status, usage), and the
failures ``response.failed`` and ``error``. Other events are skipped. Each
event the fold reads is validated against the fields it uses (the SDK builds
its objects without checking them): a wrong shape raises
:class:`msgspec.ValidationError` saying what and where.

Every output item other than a message or a function call (reasoning with its
``encrypted_content``, compaction, items of server tools) is kept whole as a
provider item, as the ``response.output_item.done`` event carried it; messages
and calls get ``text`` and ``tool-call`` markers holding the rest of the item
(its id, status, phase), so the adapter sends every item back where it stood.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec

from agent_core import TEXT_MARKER, TOOL_CALL_MARKER, ProviderItem, Usage

from .._model import ModelError, ModelReply, ModelToolCall, TextSink
from ._finish import Tokens
from ._limits import AnswerSize, StreamLimits
from ._timeline import item_json

PROVIDER_ID = "openai-responses"
"""The ``provider`` of the items this adapter keeps and sends back."""

RETRYABLE_CODES = frozenset({"server_error", "rate_limit_exceeded", "vector_store_timeout"})
"""Error codes of ``response.failed`` / ``error`` events that a new attempt may not meet."""


class _Kind(msgspec.Struct):
    type: str


class _Item(msgspec.Struct):
    type: str
    id: str | None = None


class _Added(msgspec.Struct):
    output_index: int
    item: _Item


class _Done(msgspec.Struct):
    output_index: int
    item: Any


class _Piece(msgspec.Struct):
    output_index: int
    delta: str


class _Call(msgspec.Struct):
    call_id: str
    name: str
    arguments: str = ""


class _Part(msgspec.Struct):
    type: str
    text: str | None = None
    refusal: str | None = None


class _MessageItem(msgspec.Struct):
    content: list[_Part] = []


class _InputDetails(msgspec.Struct):
    cached_tokens: Tokens | None = None
    cache_write_tokens: Tokens | None = None


class _OutputDetails(msgspec.Struct):
    reasoning_tokens: Tokens | None = None


class _Usage(msgspec.Struct):
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    input_tokens_details: _InputDetails | None = None
    output_tokens_details: _OutputDetails | None = None

    def counts(self) -> Usage:
        """The usage; a breakdown beyond its total counts as the total."""
        inputs, outputs = self.input_tokens or 0, self.output_tokens or 0
        details, produced = self.input_tokens_details or _InputDetails(), self.output_tokens_details
        read = min(details.cached_tokens or 0, inputs)
        return Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            cache_read_tokens=read,
            cache_write_tokens=min(details.cache_write_tokens or 0, inputs - read),
            reasoning_tokens=min((produced.reasoning_tokens or 0) if produced else 0, outputs),
        )


class _Incomplete(msgspec.Struct):
    reason: str | None = None


class _Error(msgspec.Struct):
    code: str | None = None
    message: str = ""


class _Response(msgspec.Struct):
    status: str | None = None
    usage: _Usage | None = None
    incomplete_details: _Incomplete | None = None
    error: _Error | None = None


class _Finished(msgspec.Struct):
    response: _Response


class _ErrorEvent(msgspec.Struct):
    message: str = ""
    code: str | None = None


class _Output:
    """The output items by index, as they stream: kinds, text and argument pieces, and each item whole once done."""

    __slots__ = ("arguments", "done", "kinds", "refused", "text")

    def __init__(self) -> None:
        self.kinds: dict[int, str] = {}
        self.text: dict[int, list[str]] = {}
        self.arguments: dict[int, list[str]] = {}
        self.done: dict[int, dict[str, Any]] = {}
        self.refused = False

    def finish(self, index: int, item: Any, on_text: TextSink, size: AnswerSize) -> None:
        """Keep the whole item; a message whose text never streamed as deltas gives it now."""
        whole = _as_object(item)
        size.add(len(msgspec.json.encode(whole)))
        kind = msgspec.convert(whole, _Item).type
        self.kinds[index] = kind
        self.done[index] = whole
        if kind == "message" and not self.text.get(index):
            parts = msgspec.convert(whole, _MessageItem).content
            said = "".join(part.text or part.refusal or "" for part in parts)
            self.refused = self.refused or any(part.type == "refusal" for part in parts)
            if said:
                self.text[index] = [said]
                on_text(said)
        elif kind == "function_call":
            msgspec.convert(whole, _Call)  # validated here, read in order at the end

    def reply(self, model: str) -> tuple[str, tuple[ModelToolCall, ...], tuple[ProviderItem, ...]]:
        """The answer's text, its calls and its items, in output order."""
        texts: list[str] = []
        calls: list[ModelToolCall] = []
        items: list[ProviderItem] = []
        for index in sorted(self.kinds):
            kind, whole = self.kinds[index], self.done.get(index)
            if kind == "message":
                said = "".join(self.text.get(index, ()))
                texts.append(said)
                rest = {k: v for k, v in (whole or {}).items() if k != "content"}
                items.append(_marker(TEXT_MARKER, model, rest, chars=len(said)))
            elif kind == "function_call":
                if whole is None:
                    raise msgspec.ValidationError(f"Expected output item {index} (a function call) to be done")
                call = msgspec.convert(whole, _Call)
                arguments = call.arguments or "".join(self.arguments.get(index, ())) or "{}"
                calls.append(ModelToolCall(id=call.call_id, name=call.name, arguments=arguments))
                rest = {k: v for k, v in whole.items() if k not in ("call_id", "name", "arguments")}
                items.append(_marker(TOOL_CALL_MARKER, model, rest, ref=call.call_id))
            elif whole is not None:
                items.append(ProviderItem(kind=kind, provider=PROVIDER_ID, model=model, data=item_json(whole)))
        opaque = any(item.kind not in (TEXT_MARKER, TOOL_CALL_MARKER) for item in items)
        return "".join(texts), tuple(calls), tuple(items) if opaque else ()


def _marker(kind: str, model: str, rest: dict[str, Any], *, chars: int = 0, ref: str = "") -> ProviderItem:
    data = item_json(rest) if rest else ""
    return ProviderItem(kind=kind, provider=PROVIDER_ID, model=model, data=data, ref=ref, chars=chars)


def _as_object(item: Any) -> dict[str, Any]:
    """An output item as the JSON object the server sent (the SDK's ``to_dict`` keeps only the fields it sent)."""
    to_dict = getattr(item, "to_dict", None)
    whole = to_dict(mode="json", warnings=False) if callable(to_dict) else item
    if not isinstance(whole, dict):
        raise msgspec.ValidationError(f"Expected `object`, got `{type(whole).__name__}` - at `$.item`")
    return whole


async def read_events(
    stream: AsyncIterator[Any], on_text: TextSink, model: str = "", size: AnswerSize | None = None
) -> ModelReply:
    """Fold a Responses-API event stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``.

    ``finish_reason`` stays empty when the stream ended before the response
    completed (a stream cut off); it is ``completed``, ``refusal`` (the model
    refused), or ``incomplete/<reason>`` (``max_output_tokens``,
    ``content_filter``). A ``response.failed`` or ``error`` event raises
    :class:`~effects.ModelError`, retryable for server errors and rate limits. ``size`` counts what the reply
    keeps: the text and argument pieces, and each finished item as JSON (:class:`StreamTooLarge` past its limit).
    """
    size = size or AnswerSize(StreamLimits().answer_chars)
    output = _Output()
    finish = ""
    usage = Usage()
    async for event in stream:
        kind = msgspec.convert(event, _Kind, from_attributes=True).type
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            piece = msgspec.convert(event, _Piece, from_attributes=True)
            size.add(len(piece.delta))
            output.kinds.setdefault(piece.output_index, "message")
            output.text.setdefault(piece.output_index, []).append(piece.delta)
            output.refused = output.refused or kind == "response.refusal.delta"
            if piece.delta:
                on_text(piece.delta)
        elif kind == "response.function_call_arguments.delta":
            piece = msgspec.convert(event, _Piece, from_attributes=True)
            size.add(len(piece.delta))
            output.arguments.setdefault(piece.output_index, []).append(piece.delta)
        elif kind == "response.output_item.added":
            added = msgspec.convert(event, _Added, from_attributes=True)
            output.kinds.setdefault(added.output_index, added.item.type)
        elif kind == "response.output_item.done":
            done = msgspec.convert(event, _Done, from_attributes=True)
            output.finish(done.output_index, done.item, on_text, size)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = msgspec.convert(event, _Finished, from_attributes=True).response
            usage = response.usage.counts() if response.usage is not None else usage
            finish = _finish(kind, response, output.refused)
        elif kind == "error":
            failed = msgspec.convert(event, _ErrorEvent, from_attributes=True)
            raise _failure(failed.code, failed.message)
    text, calls, items = output.reply(model)
    return ModelReply(text=text, tool_calls=calls, usage=usage, finish_reason=finish, items=items)


def _finish(kind: str, response: _Response, refused: bool) -> str:
    if kind == "response.failed":
        error = response.error or _Error()
        raise _failure(error.code, error.message)
    if kind == "response.incomplete":
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return f"incomplete/{reason or 'unknown'}"
    return "refusal" if refused else "completed"


def _failure(code: str | None, message: str) -> ModelError:
    retryable = code in RETRYABLE_CODES
    hint = "Retryable." if retryable else "Not retryable."
    return ModelError(
        f"the response failed ({code or 'no code'}): {message or 'no message'}. {hint}", retryable=retryable
    )
