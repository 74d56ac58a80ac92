"""An adapter for OpenAI's Responses API, on the official ``openai`` SDK's async client (the ``openai`` extra).

The log, not the server, holds the conversation: requests are sent with
``store=False`` and ``include=["reasoning.encrypted_content"]``, and every
call sends the whole context (never a ``previous_response_id``), so a session
resumes from its log on any machine. The reply is streamed (read by
:func:`read_events`); reasoning items (with their encrypted content),
compaction items and other opaque output items are kept in the log and sent
back where they stood, before the function calls and messages they preceded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from types import MappingProxyType
from typing import Any, assert_never

from agent_core import ContextMessage, ContextToolCall, LlmContext, ProviderItem

from .._model import ModelError, ModelReply, TextSink, offered_tools
from ._client import HttpModel
from ._errors import redact
from ._finish import CONTENT_FILTER, OUTPUT_LIMIT
from ._limits import StreamLimits
from ._output import json_schema_format
from ._responses_stream import PROVIDER_ID, read_events
from ._timeline import Asked, Said, item_object, layout, regroup, schema_object
from .openai import connect

PROVIDER = "OpenAI Responses"


class OpenAIResponsesModel(HttpModel):
    """A :class:`~effects.Model` answering through OpenAI's Responses API (``client.responses.create``, streamed).

    ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY``. ``store`` is ``False`` by default: the server keeps
    nothing, reasoning comes back encrypted and goes back with the next request.
    ``reasoning`` (``{"effort": "medium", "summary": "auto"}``) and
    ``context_management`` (``[{"type": "compaction", "compact_threshold":
    200000}]``: server-side compaction, whose items are logged and sent back)
    are passed as given (without it, a session whose compaction policy has
    strategy ``provider`` sends its threshold); other keyword arguments (``max_output_tokens``,
    ``timeout``, ``extra_body``...) go to every call.

    Reasoning and compaction items are sent back only to the model that made
    them (the items of another model or provider are left out). A stream that
    ends before the response completes is a retryable
    :class:`~effects.ModelError`, as are ``response.failed`` events for server
    errors and rate limits; an answer the model refused or that stopped at
    ``max_output_tokens`` (or a content filter) completes with a visible marker.
    """

    _key_hint = "OPENAI_API_KEY or api_key=..."
    _finish_field = "status"
    _truncations = MappingProxyType(
        {
            "incomplete/max_output_tokens": OUTPUT_LIMIT,
            "incomplete/content_filter": CONTENT_FILTER,
            "refusal": CONTENT_FILTER,
        }
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        store: bool = False,
        reasoning: Mapping[str, Any] | None = None,
        context_management: Iterable[Mapping[str, Any]] | None = None,
        temperature: float | None = None,
        stream_limits: StreamLimits | None = None,
        **request_options: Any,
    ) -> None:
        connect(self, "OpenAIResponsesModel", api_key, base_url, PROVIDER, stream_limits)
        self.model = model
        options: dict[str, Any] = {"store": store, "include": ["reasoning.encrypted_content"]}
        if reasoning is not None:
            options["reasoning"] = dict(reasoning)
        if context_management is not None:
            options["context_management"] = [dict(entry) for entry in context_management]
        if temperature is not None:
            options["temperature"] = temperature
        self._options = {**options, **request_options}

    def _request(self, context: LlmContext) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "input": self.request_input(context), **self._options}
        if context.system_prompt:
            request["instructions"] = context.system_prompt
        tools = request_tools(context)
        if tools:
            request["tools"] = tools
        if context.output_schema:
            text = request.get("text")
            request["text"] = {
                **(text if isinstance(text, dict) else {}),
                "format": {"type": "json_schema", **json_schema_format(context.output_schema)},
            }
        if context.compact_threshold and "context_management" not in request:
            # The session's compaction policy leaves it to the provider ("provider" strategy).
            request["context_management"] = [{"type": "compaction", "compact_threshold": context.compact_threshold}]
        return request

    def request_input(self, context: LlmContext) -> list[dict[str, Any]]:
        """The ``input`` items of a request: messages, the model's items as they came (reasoning, messages,
        function calls, compaction...), and one ``function_call_output`` per call."""
        items: list[dict[str, Any]] = []
        for entry in regroup(context.entries):
            if isinstance(entry, ContextMessage):
                if entry.role == "user":
                    items.append({"type": "message", "role": "user", "content": entry.content})
                elif entry.content or entry.items:
                    items += self._assistant_items(entry.content, (), entry.items)
                continue
            items += self._assistant_items(entry.text, entry.calls, entry.items)
            for result in entry.results:
                output = f"Error: {result.content}" if result.is_error else result.content
                items.append({"type": "function_call_output", "call_id": result.tool_call_id, "output": output})
        return items

    def _assistant_items(
        self, text: str, calls: tuple[ContextToolCall, ...], kept: tuple[ProviderItem, ...]
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for part in layout(text, calls, kept, self._mine):
            if isinstance(part, Said):
                envelope = item_object(part.marker) if part.marker is not None and part.marker.data else None
                if envelope is None:
                    items.append({"type": "message", "role": "assistant", "content": part.text})
                else:
                    items.append(
                        {**envelope, "content": [{"type": "output_text", "text": part.text, "annotations": []}]}
                    )
            elif isinstance(part, Asked):
                call = part.call
                envelope = item_object(part.marker) if part.marker is not None and part.marker.data else {}
                items.append(
                    {
                        **envelope,
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.parameters or "{}",
                    }
                )
            elif isinstance(part, ProviderItem):
                items.append(item_object(part))
            else:
                assert_never(part)
        return items

    def _mine(self, item: ProviderItem) -> bool:
        """Items this adapter sends back: its provider's, made by the same model (encrypted reasoning is the model's)."""
        return item.provider == PROVIDER_ID and item.model == self.model

    async def _open(self, request: dict[str, Any]) -> Any:
        return await self._client.responses.create(**request, stream=True)

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        try:
            return await read_events(stream, on_text, self.model, self._answer())
        except ModelError as error:
            raise ModelError(redact(f"{self._origin}: {error}", self._secrets), retryable=error.retryable) from None


def request_tools(context: LlmContext) -> list[dict[str, Any]]:
    """The ``tools`` of a request: every offered tool (internal context tools included) as a function."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": schema_object(tool.parameters, tool.name),
            "strict": False,
        }
        for tool in offered_tools(context)
    ]
