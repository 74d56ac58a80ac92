"""Fuzzing both providers' stream readers: whatever a server streams, ``complete`` returns a well-formed reply
or raises a ModelError naming the provider and the URL; the folds themselves raise only validation errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest
from anthropic._models import construct_type as anthropic_construct
from anthropic.types import RawMessageStreamEvent
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._models import construct_type as openai_construct
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

import agent_core as ac
from effects import ModelError
from effects.providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from effects.providers._anthropic_stream import read_events
from effects.providers._openai_stream import read_stream
from effects.providers._responses_stream import read_events as read_responses
from effects.testing import FakeProviderServer, FakeToolCall, Reply, anthropic_stream, openai_stream, responses_stream

from ._bytes import EXAMPLES, fuzz, json_values, mutated, run_now

QUESTION = ac.llm_context(
    ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s"),
            ac.UserMessageReceived(timestamp=2, message_id="u", content="What time is it?"),
        ]
    )
)

CALLS = [FakeToolCall("call_1", "get_time", ['{"timezone": ', '"UTC"}'])]
STREAMS = {
    "openai": openai_stream(["It is ", "noon."], CALLS, reasoning=["Noon ", "is 12."]),
    "anthropic": anthropic_stream(["It is ", "noon."], CALLS, thinking=["Noon ", "is 12."]),
    "responses": responses_stream(["It is ", "noon."], CALLS, reasoning=["Noon ", "is 12."]),
}
Adapter = OpenAIModel | AnthropicModel | OpenAIResponsesModel
FOLDS = {"openai": read_stream, "anthropic": read_events, "responses": read_responses}
SHAPES = {"openai": (openai_construct, ChatCompletionChunk), "anthropic": (anthropic_construct, RawMessageStreamEvent)}
SHAPES["responses"] = (openai_construct, ResponseStreamEvent)


def _data(event: str) -> Any:
    return json.loads(next(line[6:] for line in event.splitlines() if line.startswith("data: ")))


@st.composite
def chunk_values(draw: st.DrawFn, provider: str) -> list[Any]:
    """A provider's valid chunks as JSON values, some of their fields replaced by arbitrary values."""
    values = [_data(e) for e in STREAMS[provider] if "[DONE]" not in e and "event: ping" not in e]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(values) - 1))
        target: Any = values[at]
        while isinstance(target, dict) and target and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(target)))
            if not isinstance(target[key], dict):
                break
            target = target[key]
        if isinstance(target, dict) and target:
            target[draw(st.sampled_from(sorted(target)))] = draw(json_values)
        else:
            values[at] = draw(json_values)
    return values


async def _listed(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


@fuzz
@given(st.data())
@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses"])
def test_a_fold_raises_only_a_validation_error(provider: str, data: st.DataObject) -> None:
    values = data.draw(chunk_values(provider))
    construct, shape = SHAPES[provider]
    chunks = [construct(value=v, type_=shape) for v in values]
    try:
        reply = run_now(FOLDS[provider](_listed(chunks), lambda _: None))
    except (msgspec.ValidationError, ModelError):  # a Responses stream may end in a failure event
        return
    assert isinstance(reply.text, str) and reply.usage.input_tokens >= 0 and reply.usage.output_tokens >= 0
    assert all(isinstance(c.arguments, str) and isinstance(c.name, str) for c in reply.tool_calls)
    assert all(isinstance(item.data, str) and item.chars >= 0 for item in reply.items)
    marked = sum(item.chars for item in reply.items if item.kind == "text")
    assert not reply.items or marked == len(reply.text)  # markers cover the text the runner logs


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[FakeProviderServer, BlockingPortal, dict[str, Adapter]]]:
    """One server, one event loop (a portal) and one adapter per provider for all the examples."""
    with FakeProviderServer() as server, start_blocking_portal() as portal:
        built: dict[str, Adapter] = {
            "openai": OpenAIModel("m", base_url=server.url + "/v1", api_key="sk-fuzz"),
            "anthropic": AnthropicModel("m", base_url=server.url, api_key="sk-fuzz"),
            "responses": OpenAIResponsesModel("m", base_url=server.url + "/v1", api_key="sk-fuzz"),
        }
        yield server, portal, built
        for model in built.values():
            portal.call(model.aclose)


@st.composite
def hostile_stream(draw: st.DrawFn, provider: str) -> list[str]:
    """The provider's stream with some events damaged as bytes (framing included) or dropped."""
    events = list(STREAMS[provider])
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(events) - 1))
        if draw(st.integers(0, 4)) == 0:
            del events[at]
            if not events:
                break
        else:
            events[at] = draw(mutated([events[at].encode()])).decode("utf-8", "replace")
    return events


async def _complete(model: Adapter, url: str) -> None:
    try:
        reply = await model.complete(QUESTION, lambda _: None)
    except ModelError as error:
        assert url in str(error)
        return
    assert isinstance(reply.text, str) and reply.finish_reason
    assert reply.usage.input_tokens >= 0 and reply.usage.output_tokens >= 0


@settings(fuzz, max_examples=max(10, EXAMPLES // 2))  # each example is an HTTP round trip
@given(st.data())
@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses"])
def test_complete_on_a_hostile_stream_returns_a_reply_or_a_model_error(
    provider: str,
    models: tuple[FakeProviderServer, BlockingPortal, dict[str, Adapter]],
    data: st.DataObject,
) -> None:
    server, portal, built = models
    server.enqueue(Reply.stream(data.draw(hostile_stream(provider))))
    portal.call(_complete, built[provider], server.url)
