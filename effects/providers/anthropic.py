"""An adapter for Anthropic's messages API, on the official ``anthropic`` SDK's async client (the ``anthropic`` extra).

The reply is streamed as events (read by :func:`read_events`). Tool results go
back in a user message; consecutive messages of one role are merged, as the
API requires.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import MappingProxyType
from typing import Any

from agent_core import ContextMessage, LlmContext

from .._model import ModelReply, TextSink, offered_tools
from ._anthropic_stream import read_events
from ._client import HttpModel
from ._errors import redact
from ._extras import http_library, require
from ._finish import CONTENT_FILTER, OUTPUT_LIMIT
from ._timeline import arguments_object, regroup, schema_object

PROVIDER = "Anthropic"
EARLIER_OMITTED = "(Earlier messages of this conversation are not shown.)"
"""Sent first when the context window begins with an assistant message: the API wants a user message first."""
DEFAULT_MAX_TOKENS = 4096
"""Output tokens asked for when ``max_tokens`` is not given (the messages API requires a bound)."""


class AnthropicModel(HttpModel):
    """A :class:`~effects.Model` answering through Anthropic's messages API.

    ``base_url`` and ``api_key`` default to what the SDK reads
    (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``...). ``temperature`` and
    other keyword arguments (``top_p``, ``timeout``, ``extra_body``...) go to
    every ``messages.create`` call.

    A stream that ends without a ``stop_reason`` is a retryable
    :class:`~effects.ModelError`; an answer that stopped at ``max_tokens`` (or
    the context window) or was a ``refusal`` completes with a visible marker
    appended to its text.
    """

    _key_hint = "ANTHROPIC_API_KEY or api_key=..."
    _finish_field = "stop_reason"
    _truncations = MappingProxyType(
        {"max_tokens": OUTPUT_LIMIT, "model_context_window_exceeded": OUTPUT_LIMIT, "refusal": CONTENT_FILTER}
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        **request_options: Any,
    ) -> None:
        self._sdk = require("anthropic", extra="anthropic", user="AnthropicModel")
        self._http = http_library(self._sdk)
        self.model = model
        self._client = self._sdk.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)
        if not (self._client.api_key or self._client.auth_token or self._client.credentials):
            raise ValueError(
                "AnthropicModel needs an API key: pass api_key=... or set ANTHROPIC_API_KEY "
                "(a server that checks no key accepts any value)"
            )
        self._secrets = tuple(s for s in (api_key, self._client.api_key, self._client.auth_token) if s)
        self.base_url = redact(str(self._client.base_url), self._secrets)
        self._origin = f"{PROVIDER} request to {self.base_url}"
        self._failures = (self._sdk.AnthropicError, self._http.TransportError)
        self._options: dict[str, Any] = {"max_tokens": max_tokens, **request_options}
        if temperature is not None:  # sent in the body: this SDK version has no typed parameter for it
            self._options["extra_body"] = {**self._options.get("extra_body", {}), "temperature": temperature}

    def _request(self, context: LlmContext) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": request_messages(context), **self._options}
        if context.system_prompt:
            request["system"] = context.system_prompt
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        return request

    async def _open(self, request: dict[str, Any]) -> Any:
        return await self._client.messages.create(**request, stream=True)

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        return await read_events(stream, on_text)


def request_messages(context: LlmContext) -> list[dict[str, Any]]:
    """The ``messages`` of a request: text blocks, ``tool_use`` blocks, and ``tool_result`` blocks in a user message."""
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        elif blocks:
            messages.append({"role": role, "content": blocks})

    for item in regroup(context.entries):
        if isinstance(item, ContextMessage):
            if item.content:  # the API refuses empty text blocks
                add(item.role, [{"type": "text", "text": item.content}])
            continue
        said = [{"type": "text", "text": item.text}] if item.text else []
        uses = [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": arguments_object(c.parameters)}
            for c in item.calls
        ]
        add("assistant", said + uses)
        add("user", [_tool_result(r.tool_call_id, r.content, r.is_error) for r in item.results])
    if messages and messages[0]["role"] == "assistant":  # the API wants a user message first
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": EARLIER_OMITTED}]})
    return messages


def _tool_result(tool_use_id: str, content: str, is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def request_tools(context: LlmContext) -> list[dict[str, Any]]:
    """The ``tools`` of a request: every offered tool (internal context tools included) with its input schema."""
    tools: list[dict[str, Any]] = []
    for tool in offered_tools(context):
        entry: dict[str, Any] = {"name": tool.name, "input_schema": schema_object(tool.parameters, tool.name)}
        if tool.description:
            entry["description"] = tool.description
        tools.append(entry)
    return tools
