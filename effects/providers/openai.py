"""An adapter for any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, OpenRouter...).

Built on the official ``openai`` SDK's async client (the ``openai`` extra).
The reply is streamed (read by :func:`read_stream`): text deltas reach
``on_text`` as they arrive, tool calls are accumulated by their index
(arguments arrive split across chunks), and ``stream_options.include_usage``
asks for the token usage in the last chunk. The SDK's own retries are off: the
reducer retries, so retries replay.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from types import MappingProxyType
from typing import Any, Literal

from agent_core import ContextMessage, LlmContext, ProviderItem

from .._model import ModelReply, TextSink, offered_tools
from ._client import HttpModel
from ._errors import redact
from ._extras import http_library, require
from ._finish import CONTENT_FILTER, OUTPUT_LIMIT
from ._limits import StreamLimits, bounded_client
from ._openai_stream import PROVIDER_ID, read_stream
from ._output import json_schema_format
from ._timeline import item_object, regroup, schema_object

PROVIDER = "OpenAI-compatible"
SEND_REASONING = ("tool-calls", "always", "never")
"""The values of ``OpenAIModel(send_reasoning=...)``."""


class OpenAIModel(HttpModel):
    """A :class:`~effects.Model` answering through an OpenAI-compatible chat-completions API.

    ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY``, as the SDK reads them. A server that needs no key (a
    local vLLM, Ollama or llama.cpp) works with a ``base_url`` alone. Other
    keyword arguments (``max_tokens``, ``top_p``, ``timeout``, ``extra_body``...)
    are passed to every ``chat.completions.create`` call.

    A stream that ends without a ``finish_reason`` is a retryable
    :class:`~effects.ModelError`; an answer that stopped at ``length`` or
    ``content_filter`` completes with a visible marker appended to its text.

    Reasoning a server streams (``reasoning_content`` or ``reasoning``) is kept
    in the log; ``send_reasoning`` says which assistant messages carry it back:
    ``"tool-calls"`` (the default: the messages that asked for tool calls, as
    DeepSeek's thinking mode requires within a turn), ``"always"``, or
    ``"never"`` (servers that refuse it in requests).

    ``stream_limits`` bounds what one call may receive (:class:`StreamLimits`:
    an event, the body, the answer); past a bound the call fails, not retryable.
    """

    _key_hint = "OPENAI_API_KEY or api_key=..."
    _finish_field = "finish_reason"
    _truncations = MappingProxyType({"length": OUTPUT_LIMIT, "content_filter": CONTENT_FILTER})

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        send_reasoning: Literal["tool-calls", "always", "never"] = "tool-calls",
        stream_limits: StreamLimits | None = None,
        **request_options: Any,
    ) -> None:
        if send_reasoning not in SEND_REASONING:
            raise ValueError(
                f"expected send_reasoning to be one of {', '.join(SEND_REASONING)}, got {send_reasoning!r}"
            )
        connect(self, "OpenAIModel", api_key, base_url, PROVIDER, stream_limits)
        self.model = model
        self.send_reasoning = send_reasoning
        self._options = dict(request_options)
        if temperature is not None:
            self._options["temperature"] = temperature

    def _request(self, context: LlmContext) -> dict[str, Any]:
        messages = request_messages(context, self.send_reasoning)
        request: dict[str, Any] = {"model": self.model, "messages": messages, **self._options}
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        if context.output_schema:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": json_schema_format(context.output_schema),
            }
        return request

    async def _open(self, request: dict[str, Any]) -> Any:
        return await self._client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        return await read_stream(stream, on_text, self.model, self._answer())


def connect(
    adapter: HttpModel,
    user: str,
    api_key: str | None,
    base_url: str | None,
    provider: str,
    limits: StreamLimits | None = None,
) -> None:
    """Give ``adapter`` (``user`` names its class) the ``openai`` SDK's async client for ``api_key`` and
    ``base_url`` (or the SDK's environment variables), with the SDK's retries off and every body it reads within
    ``limits``."""
    adapter._sdk = require("openai", extra="openai", user=user)
    adapter._http = http_library(adapter._sdk)
    key = api_key or os.environ.get("OPENAI_API_KEY") or ""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    if not key and url is None:
        raise ValueError(
            f"{user} needs an API key: pass api_key=... or set OPENAI_API_KEY "
            "(a local server that needs no key only needs base_url=... or OPENAI_BASE_URL)"
        )
    adapter._secrets = (key,) if key else ()
    adapter._limits = limits or StreamLimits()
    http_client = bounded_client(adapter._sdk, adapter._http, adapter._limits)
    adapter._client = adapter._sdk.AsyncOpenAI(
        api_key=key or "no-key", base_url=url, max_retries=0, http_client=http_client
    )
    adapter.base_url = redact(str(adapter._client.base_url), adapter._secrets)
    adapter._origin = f"{provider} request to {adapter.base_url}"
    adapter._failures = (adapter._sdk.OpenAIError, adapter._http.TransportError)


def request_messages(context: LlmContext, send_reasoning: str = "never") -> list[dict[str, Any]]:
    """The ``messages`` of a request: system prompt, messages, assistant tool calls, then one ``tool`` message per
    call; the kept reasoning on the assistant messages ``send_reasoning`` names."""
    messages: list[dict[str, Any]] = []
    if context.system_prompt:
        messages.append({"role": "system", "content": context.system_prompt})
    for item in regroup(context.entries):
        if isinstance(item, ContextMessage):
            message: dict[str, Any] = {"role": item.role, "content": item.content}
            if send_reasoning == "always":
                message.update(_reasoning(item.items))
            messages.append(message)
            continue
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.parameters or "{}"}}
            for c in item.calls
        ]
        message = {"role": "assistant", "content": item.text or None, "tool_calls": calls}
        if send_reasoning != "never":
            message.update(_reasoning(item.items))
        messages.append(message)
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


def _reasoning(items: tuple[ProviderItem, ...]) -> dict[str, object]:
    """The reasoning field a server sent with an assistant message, as it sent it (empty when there is none)."""
    for item in items:
        if item.provider == PROVIDER_ID and item.kind == "reasoning-content":
            return item_object(item)
    return {}
