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
from typing import Any

from agent_core import ContextMessage, LlmContext

from .._model import ModelReply, TextSink, offered_tools
from ._client import HttpModel
from ._errors import redact
from ._extras import http_library, require
from ._finish import CONTENT_FILTER, OUTPUT_LIMIT
from ._openai_stream import read_stream
from ._timeline import regroup, schema_object

PROVIDER = "OpenAI-compatible"


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
        self._failures = (self._sdk.OpenAIError, self._http.TransportError)
        self._options = dict(request_options)
        if temperature is not None:
            self._options["temperature"] = temperature

    def _request(self, context: LlmContext) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": request_messages(context), **self._options}
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        return request

    async def _open(self, request: dict[str, Any]) -> Any:
        return await self._client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        return await read_stream(stream, on_text)


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
