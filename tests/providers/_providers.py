"""The adapters side by side, so one error table tests them all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from agent_core import LlmContext
from effects import ModelReply, TextSink
from effects.providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from effects.testing import FakeProviderServer, Reply, anthropic_reply, openai_reply, responses_reply

Adapter = OpenAIModel | AnthropicModel | OpenAIResponsesModel
KEY = "sk-test-0123456789"


class Provider(NamedTuple):
    """How to build one adapter against the fake server, and how that provider streams a reply."""

    name: str
    build: Callable[..., Adapter]
    reply: Callable[..., Reply]
    origin: Callable[[FakeProviderServer], str]


def _openai(server: FakeProviderServer, **options: Any) -> Adapter:
    return OpenAIModel("gpt-test", base_url=server.url + "/v1", api_key=options.pop("api_key", KEY), **options)


def _anthropic(server: FakeProviderServer, **options: Any) -> Adapter:
    return AnthropicModel("claude-test", base_url=server.url, api_key=options.pop("api_key", KEY), **options)


def _responses(server: FakeProviderServer, **options: Any) -> Adapter:
    return OpenAIResponsesModel("gpt-test", base_url=server.url + "/v1", api_key=options.pop("api_key", KEY), **options)


PROVIDERS = (
    Provider("openai", _openai, openai_reply, lambda s: f"OpenAI-compatible request to {s.url}/v1/"),
    Provider("anthropic", _anthropic, anthropic_reply, lambda s: f"Anthropic request to {s.url}"),
    Provider("responses", _responses, responses_reply, lambda s: f"OpenAI Responses request to {s.url}/v1/"),
)


async def complete(adapter: Adapter, request: LlmContext, on_text: TextSink = lambda _: None) -> ModelReply:
    """One call, closing the adapter's connections afterwards."""
    async with adapter:
        return await adapter.complete(request, on_text)
