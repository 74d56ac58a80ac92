"""An adapter for Anthropic's messages API, on the official ``anthropic`` SDK's async client (the ``anthropic`` extra).

The reply is streamed as events: ``message_start`` (input tokens),
``content_block_start`` (a text block or a ``tool_use`` block with its id and
name), ``content_block_delta`` (``text_delta`` to ``on_text``,
``input_json_delta`` pieces of a call's arguments), ``message_delta`` (stop
reason, output tokens). Tool results go back in a user message; consecutive
messages of one role are merged, as the API requires.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_core import ContextMessage, LlmContext, Usage

from .._model import ModelError, ModelReply, ModelToolCall, TextSink, offered_tools
from ._client import HttpModel
from ._errors import redact, response_body, status_error, transport_error
from ._extras import http_library, require
from ._timeline import arguments_object, regroup, schema_object

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

PROVIDER = "Anthropic"
_KEY_HINT = "ANTHROPIC_API_KEY or api_key=..."
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
    """

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
        self._options: dict[str, Any] = {"max_tokens": max_tokens, **request_options}
        if temperature is not None:  # sent in the body: this SDK version has no typed parameter for it
            self._options["extra_body"] = {**self._options.get("extra_body", {}), "temperature": temperature}

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Stream one message for ``context``; raise :class:`~effects.ModelError` when it fails."""
        request: dict[str, Any] = {"model": self.model, "messages": request_messages(context), **self._options}
        if context.system_prompt:
            request["system"] = context.system_prompt
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        try:
            stream = await self._client.messages.create(**request, stream=True)
            async with stream:
                return await read_events(stream, on_text)
        except (self._sdk.AnthropicError, self._http.TransportError) as error:  # the SDK lets some read errors through
            raise self._translate(error) from None

    def _translate(self, error: Exception) -> ModelError:
        sdk = self._sdk
        if isinstance(error, (sdk.APIConnectionError, self._http.TransportError)):
            timed_out = isinstance(error, (sdk.APITimeoutError, self._http.TimeoutException))
            return transport_error(self._origin, timed_out=timed_out, secrets=self._secrets)
        if isinstance(error, sdk.APIStatusError):  # an ``error`` event inside a stream has its 200 status
            body = error.body if error.status_code < 300 else response_body(error.response, error.body)
            return status_error(self._origin, error.status_code, body, error.response.headers, self._secrets, _KEY_HINT)
        if isinstance(error, sdk.APIError):
            return status_error(self._origin, 200, error.body, None, self._secrets, _KEY_HINT)
        return ModelError(redact(f"{self._origin} failed: {error}", self._secrets), retryable=False)


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


async def read_events(stream: AsyncIterator[RawMessageStreamEvent], on_text: TextSink) -> ModelReply:
    """Fold a messages-API event stream into a :class:`~effects.ModelReply`, streaming text to ``on_text``."""
    text: list[str] = []
    uses: dict[int, list[str]] = {}  # block index -> [id, name, input from the start, JSON pieces...]
    input_tokens = output_tokens = 0
    stop = ""
    async for event in stream:
        if event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                text.append(delta.text)
                on_text(delta.text)
            elif delta.type == "input_json_delta" and event.index in uses:
                uses[event.index].append(delta.partial_json)
        elif event.type == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                uses[event.index] = [block.id, block.name, json.dumps(block.input) if block.input else "{}"]
            elif block.type == "text" and block.text:
                text.append(block.text)
                on_text(block.text)
        elif event.type == "message_start":
            input_tokens = _input_tokens(event.message.usage)
            output_tokens = event.message.usage.output_tokens
        elif event.type == "message_delta":  # counts here are cumulative
            stop = event.delta.stop_reason or stop
            output_tokens = event.usage.output_tokens
            if event.usage.input_tokens is not None:
                input_tokens = _input_tokens(event.usage)
    calls = tuple(
        ModelToolCall(id=slot[0], name=slot[1], arguments="".join(slot[3:]) or slot[2])
        for _, slot in sorted(uses.items())
    )
    usage_total = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ModelReply(text="".join(text), tool_calls=calls, usage=usage_total, finish_reason=stop)


def _input_tokens(usage: Any) -> int:
    """All input tokens: fresh ones plus those written to and read from the prompt cache."""
    total: int = usage.input_tokens or 0
    return total + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
