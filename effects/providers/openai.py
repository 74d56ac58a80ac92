"""An adapter for any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, OpenRouter...).

Built on the official ``openai`` SDK's async client (the ``openai`` extra).
The reply is streamed: text deltas reach ``on_text`` as they arrive, tool
calls are accumulated by their index (arguments arrive split across chunks),
and ``stream_options.include_usage`` asks for the token usage in the last
chunk. The SDK's own retries are off: the reducer retries, so retries replay.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_core import ContextMessage, LlmContext, Usage

from .._model import ModelError, ModelReply, ModelToolCall, TextSink, offered_tools
from ._client import HttpModel
from ._errors import redact, response_body, status_error, transport_error
from ._extras import http_library, require
from ._timeline import regroup, schema_object

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

PROVIDER = "OpenAI-compatible"
_KEY_HINT = "OPENAI_API_KEY or api_key=..."


class OpenAIModel(HttpModel):
    """A :class:`~effects.Model` answering through an OpenAI-compatible chat-completions API.

    ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY``, as the SDK reads them. A server that needs no key (a
    local vLLM, Ollama or llama.cpp) works with a ``base_url`` alone. Other
    keyword arguments (``max_tokens``, ``top_p``, ``timeout``, ``extra_body``...)
    are passed to every ``chat.completions.create`` call.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        **request_options: Any,
    ) -> None:
        self._sdk = require("openai", extra="openai", user="OpenAIModel")
        self._http = http_library(self._sdk)
        key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if not key and url is None:
            raise ValueError(
                "OpenAIModel needs an API key: pass api_key=... or set OPENAI_API_KEY "
                "(a local server that needs no key only needs base_url=... or OPENAI_BASE_URL)"
            )
        self.model = model
        self._secrets = (key,) if key else ()
        self._client = self._sdk.AsyncOpenAI(api_key=key or "no-key", base_url=url, max_retries=0)
        self.base_url = redact(str(self._client.base_url), self._secrets)
        self._origin = f"{PROVIDER} request to {self.base_url}"
        self._options = dict(request_options)
        if temperature is not None:
            self._options["temperature"] = temperature

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Stream one chat completion for ``context``; raise :class:`~effects.ModelError` when it fails."""
        request: dict[str, Any] = {"model": self.model, "messages": request_messages(context), **self._options}
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        try:
            stream = await self._client.chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            )
            async with stream:
                return await read_stream(stream, on_text)
        except (self._sdk.OpenAIError, self._http.TransportError) as error:  # the SDK lets some read errors through
            raise self._translate(error) from None

    def _translate(self, error: Exception) -> ModelError:
        sdk = self._sdk
        if isinstance(error, (sdk.APIConnectionError, self._http.TransportError)):
            timed_out = isinstance(error, (sdk.APITimeoutError, self._http.TimeoutException))
            return transport_error(self._origin, timed_out=timed_out, secrets=self._secrets)
        if isinstance(error, sdk.APIStatusError):
            body = response_body(error.response, error.body)
            return status_error(self._origin, error.status_code, body, error.response.headers, self._secrets, _KEY_HINT)
        if isinstance(error, sdk.APIError):  # an error object inside the stream
            return status_error(self._origin, 200, error.body, None, self._secrets, _KEY_HINT)
        return ModelError(redact(f"{self._origin} failed: {error}", self._secrets), retryable=False)


def request_messages(context: LlmContext) -> list[dict[str, Any]]:
    """The ``messages`` of a request: system prompt, messages, assistant tool calls, then one ``tool`` message per call."""
    messages: list[dict[str, Any]] = []
    if context.system_prompt:
        messages.append({"role": "system", "content": context.system_prompt})
    for item in regroup(context.entries):
        if isinstance(item, ContextMessage):
            messages.append({"role": item.role, "content": item.content})
            continue
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.parameters or "{}"}}
            for c in item.calls
        ]
        messages.append({"role": "assistant", "content": item.text or None, "tool_calls": calls})
        for result in item.results:
            content = f"Error: {result.content}" if result.is_error else result.content
            messages.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": content})
    return messages


def request_tools(context: LlmContext) -> list[dict[str, Any]]:
    """The ``tools`` of a request: every offered tool (internal context tools included) as a function."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": schema_object(tool.parameters, tool.name),
            },
        }
        for tool in offered_tools(context)
    ]


async def read_stream(stream: AsyncIterator[ChatCompletionChunk], on_text: TextSink) -> ModelReply:
    """Fold a chat-completion chunk stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``."""
    text: list[str] = []
    calls = _ToolCalls()
    usage = Usage()
    finish = ""
    async for chunk in stream:
        if chunk.usage is not None:
            usage = Usage(input_tokens=chunk.usage.prompt_tokens, output_tokens=chunk.usage.completion_tokens)
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        piece = delta.content or delta.refusal
        if piece:
            text.append(piece)
            on_text(piece)
        if delta.tool_calls:
            for part in delta.tool_calls:
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

    def add(self, part: ChoiceDeltaToolCall) -> None:
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
