"""An adapter for Anthropic's messages API, on the official ``anthropic`` SDK's async client (the ``anthropic`` extra).

The reply is streamed as events (read by :func:`read_events`). Tool results go
back in a user message; consecutive messages of one role are merged, as the
API requires. Thinking blocks (``thinking``, ``redacted_thinking``) are kept
as provider items and written back unmodified where they stood in the
assistant content, before the ``tool_use`` they led to. Prompt caching puts
``cache_control`` breakpoints on the system prompt, the last tool and the last
block of the conversation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from types import MappingProxyType
from typing import Any, assert_never

from agent_core import ContextMessage, ContextToolCall, LlmContext, ProviderItem

from .._model import ModelReply, TextSink, offered_tools
from ._anthropic_stream import PROVIDER_ID, read_events
from ._client import HttpModel
from ._errors import redact
from ._extras import http_library, require
from ._finish import CONTENT_FILTER, OUTPUT_LIMIT
from ._limits import StreamLimits, bounded_client
from ._output import OUTPUT_NAME, answer_from_output_tool, output_tool
from ._timeline import Asked, Said, arguments_object, item_object, layout, regroup, schema_object

PROVIDER = "Anthropic"
CACHE_BREAKPOINT: Mapping[str, str] = MappingProxyType({"type": "ephemeral"})
"""The default ``cache_control``: a 5-minute prompt-cache breakpoint."""
_NOT_CACHEABLE = ("thinking", "redacted_thinking")
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

    ``thinking`` turns on extended thinking: ``{"type": "enabled",
    "budget_tokens": 2048}`` (at least 1,024 and below ``max_tokens``) or
    ``{"type": "adaptive"}``. Its blocks are kept in the log and sent back as
    the API requires. ``cache_control`` is the prompt-cache breakpoint put on
    the system prompt, the last tool and the conversation's last block
    (:data:`CACHE_BREAKPOINT` by default, ``{"type": "ephemeral", "ttl":
    "1h"}`` for an hour, ``None`` for none).

    ``stream_limits`` bounds what one call may receive (:class:`StreamLimits`:
    an event, the body, the answer); past a bound the call fails, not retryable.
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
        thinking: Mapping[str, Any] | None = None,
        cache_control: Mapping[str, Any] | None = CACHE_BREAKPOINT,
        stream_limits: StreamLimits | None = None,
        **request_options: Any,
    ) -> None:
        self._sdk = require("anthropic", extra="anthropic", user="AnthropicModel")
        self._http = http_library(self._sdk)
        self.model = model
        self._limits = stream_limits or StreamLimits()
        http_client = bounded_client(self._sdk, self._http, self._limits)
        self._client = self._sdk.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, http_client=http_client
        )
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
        if thinking is not None:
            self._options["thinking"] = dict(thinking)
        self._cache = dict(cache_control) if cache_control is not None else None

    def _request(self, context: LlmContext) -> dict[str, Any]:
        cache = self._cache
        request: dict[str, Any] = {"model": self.model, "messages": request_messages(context, cache), **self._options}
        if context.system_prompt:
            system: Any = context.system_prompt
            if cache is not None:
                system = [{"type": "text", "text": system, "cache_control": dict(cache)}]
            request["system"] = system
        tools = request_tools(context)
        if context.output_schema:
            self._ask_for_output(request, tools, context.output_schema)
        if tools:
            if cache is not None:
                tools[-1]["cache_control"] = dict(cache)
            request["tools"] = tools
        return request

    def _ask_for_output(self, request: dict[str, Any], tools: list[dict[str, Any]], schema: str) -> None:
        """Offer the output tool and make the model call a tool: that one when it is the only tool, any
        otherwise (it may still use the others first). With thinking on, Anthropic refuses a forced tool
        choice: the model is then told to call it, and a text answer is validated as JSON all the same."""
        tools.append(output_tool(schema))
        if isinstance(request.get("thinking"), dict) and request["thinking"].get("type") in ("enabled", "adaptive"):
            return
        request["tool_choice"] = {"type": "tool", "name": OUTPUT_NAME} if len(tools) == 1 else {"type": "any"}

    async def _open(self, request: dict[str, Any]) -> Any:
        return await self._client.messages.create(**request, stream=True)

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        return answer_from_output_tool(await read_events(stream, on_text, self.model, self._answer()))


def request_messages(context: LlmContext, cache_control: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The ``messages`` of a request: text, thinking and ``tool_use`` blocks in assistant messages, in the order
    the model gave them, and ``tool_result`` blocks in a user message. With ``cache_control``, the last block
    that can carry a breakpoint gets it (the conversation so far is then cached for the next call)."""
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        elif blocks:
            messages.append({"role": role, "content": blocks})

    for item in regroup(context.entries):
        if isinstance(item, ContextMessage):
            if item.role == "assistant" and item.items:
                add("assistant", _assistant_blocks(item.content, (), item.items))
            elif item.content:  # the API refuses empty text blocks
                add(item.role, [{"type": "text", "text": item.content}])
            continue
        add("assistant", _assistant_blocks(item.text, item.calls, item.items))
        add("user", [_tool_result(r.tool_call_id, r.content, r.is_error) for r in item.results])
    if messages and messages[0]["role"] == "assistant":  # the API wants a user message first
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": EARLIER_OMITTED}]})
    if cache_control is not None and messages:
        cacheable = [block for block in messages[-1]["content"] if block["type"] not in _NOT_CACHEABLE]
        if cacheable:
            cacheable[-1]["cache_control"] = dict(cache_control)
    return messages


def _assistant_blocks(
    text: str, calls: tuple[ContextToolCall, ...], items: tuple[ProviderItem, ...]
) -> list[dict[str, Any]]:
    """An assistant turn's blocks: its thinking blocks exactly as they came, its text and its calls where they stood."""
    blocks: list[dict[str, Any]] = []
    for part in layout(text, calls, items, _mine):
        if isinstance(part, Said):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, Asked):
            call = part.call
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments_object(call.parameters)}
            )
        elif isinstance(part, ProviderItem):
            blocks.append(item_object(part))
        else:
            assert_never(part)
    return blocks


def _mine(item: ProviderItem) -> bool:
    """Anthropic reads back the thinking of any Claude model (the API checks each block's signature)."""
    return item.provider == PROVIDER_ID


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
