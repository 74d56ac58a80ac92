"""Servers that misbehave: whatever a provider sends becomes a well-formed reply or a ModelError that names
the provider and the URL, never a crash inside the reducer and never a cut-off answer saved as complete."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_core import LlmCallFailed, LlmMessageCompleted, ReActObserved
from effects import Agent, ModelError
from effects.testing import (
    FakeProviderServer,
    ManualClock,
    Reply,
    anthropic_stream,
    openai_stream,
    responses_stream,
    sse,
)

from ._conversation import first_question
from ._providers import PROVIDERS, Provider, complete
from .test_agent import Recorder

pytestmark = pytest.mark.anyio
STREAMS: dict[str, Callable[[list[str]], list[str]]] = {
    "openai": openai_stream,
    "anthropic": anthropic_stream,
    "responses": responses_stream,
}
FINISH = {"openai": "finish_reason", "anthropic": "stop_reason", "responses": "status"}
TRUNCATIONS = {
    "openai": ("length", "content_filter"),
    "anthropic": ("max_tokens", "refusal"),
    "responses": ("incomplete/max_output_tokens", "refusal"),
}
each_provider = pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)


async def failure(provider: Provider, server: FakeProviderServer, reply: Reply) -> ModelError:
    server.enqueue(reply)
    with pytest.raises(ModelError) as info:
        await complete(provider.build(server), first_question())
    return info.value


def _finish(provider: Provider, reason: str) -> dict[str, str]:
    return {FINISH[provider.name]: reason}


@each_provider
async def test_null_token_counts_count_as_zero(provider: Provider, server: FakeProviderServer) -> None:
    server.enqueue(provider.reply(["Hi."], usage=(None, None)))
    reply = await complete(provider.build(server), first_question())
    assert (reply.text, reply.usage.input_tokens, reply.usage.output_tokens) == ("Hi.", 0, 0)


@each_provider
async def test_a_session_whose_provider_sends_null_usage_completes(
    provider: Provider, server: FakeProviderServer
) -> None:
    server.enqueue(provider.reply(["Hi."], usage=(None, 3)))
    recorder = Recorder()
    async with provider.build(server) as model, Agent(model, clock=ManualClock()).running() as session:
        session.subscribe(recorder)
        session.send("Hello?")
        await session.settled()
        state = session.state
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    [observed] = [i for i in recorder.inputs if isinstance(i, ReActObserved)]
    assert (observed.usage.input_tokens, observed.usage.output_tokens) == (0, 3)


@each_provider
@pytest.mark.parametrize(
    ("counts", "problem"),
    [
        ((-3, 7), "Expected `int` >= 0"),
        ((12.5, 7), "Expected `int | null`, got `float`"),
        (([12], 7), "Expected `int | null`, got `array`"),
        ((2**40, 7), "Expected `int` <= 2147483647"),
    ],
)
async def test_bad_token_counts_are_a_retryable_failure_naming_the_field(
    provider: Provider, server: FakeProviderServer, counts: tuple[object, object], problem: str
) -> None:
    error = await failure(provider, server, provider.reply(["Hi."], usage=counts))
    assert error.retryable
    field = "prompt_tokens" if provider.name == "openai" else "input_tokens"
    assert str(error).startswith(f"{provider.origin(server)} sent a malformed stream: a chunk has the wrong shape (")
    assert problem in str(error) and field in str(error)


@each_provider
async def test_a_stream_cut_off_before_its_finish_reason_is_a_retryable_failure(
    provider: Provider, server: FakeProviderServer
) -> None:
    events = STREAMS[provider.name](["It is ", "noon."])
    error = await failure(provider, server, Reply.stream(events[:-3]))
    assert error.retryable
    assert str(error) == (
        f"{provider.origin(server)} was cut off: the stream ended without a {FINISH[provider.name]}, "
        "so the answer is incomplete. Retryable; if it repeats, check proxies and the server's timeouts."
    )


@each_provider
@pytest.mark.parametrize("limit", ["token-limit", "filter"])
async def test_a_truncated_answer_completes_with_a_visible_marker(
    provider: Provider, server: FakeProviderServer, limit: str
) -> None:
    reasons = TRUNCATIONS[provider.name]
    reason = reasons[0] if limit == "token-limit" else reasons[1]
    server.enqueue(provider.reply(["It is "], **_finish(provider, reason)))
    deltas: list[str] = []
    reply = await complete(provider.build(server), first_question(), deltas.append)
    what = (
        "answer cut off: the model reached its output token limit"
        if limit == "token-limit"
        else "answer stopped by the provider's content filter"
    )
    assert reply.text == f"It is \n\n[{what} ({FINISH[provider.name]}: {reason})]"
    assert "".join(deltas) == reply.text  # subscribers see the marker too


@each_provider
async def test_a_truncated_answer_is_logged_with_its_marker(provider: Provider, server: FakeProviderServer) -> None:
    reason = TRUNCATIONS[provider.name][0]
    server.enqueue(provider.reply(["Once upon"], **_finish(provider, reason)))
    recorder = Recorder()
    async with provider.build(server) as model, Agent(model, clock=ManualClock()).running() as session:
        session.subscribe(recorder)
        session.send("Tell me a story.")
        await session.settled()
    [message] = [i for i in recorder.inputs if isinstance(i, LlmMessageCompleted)]
    assert message.content.startswith("Once upon\n\n[answer cut off: the model reached its output token limit")


@each_provider
@pytest.mark.parametrize("body", [{"id": "x", "object": "chat.completion", "choices": []}, "plain text"])
async def test_a_200_answer_that_is_not_a_stream_is_an_error_naming_provider_and_url(
    provider: Provider, server: FakeProviderServer, body: object
) -> None:
    error = await failure(provider, server, Reply(body=body))
    kind = "text/plain" if isinstance(body, str) else "application/json"
    assert not error.retryable
    assert str(error) == (
        f"{provider.origin(server)} answered HTTP 200 with content-type {kind} instead of an event stream. "
        "Not retryable: the server does not stream this request; check the base URL and that the server "
        "supports streaming (stream: true)."
    )


def _malformed(provider: Provider, data: str) -> Reply:
    events = STREAMS[provider.name](["Hi."])
    event = "content_block_delta" if provider.name == "anthropic" else None
    return Reply.stream([*events[:2], sse(data, event), *events[2:]])


@each_provider
@pytest.mark.parametrize(
    ("data", "detail"),
    [
        ("{not json", "a line is not JSON (Expecting property name enclosed in double quotes at column 2)"),
        ("[1, 2]", "a chunk has the wrong shape (Expected `object`, got `array`)"),
    ],
)
async def test_a_malformed_stream_line_is_an_error_naming_provider_and_url(
    provider: Provider, server: FakeProviderServer, data: str, detail: str
) -> None:
    error = await failure(provider, server, _malformed(provider, data))
    assert error.retryable
    assert str(error) == (
        f"{provider.origin(server)} sent a malformed stream: {detail}. "
        "Retryable; if it repeats, the server does not speak this provider's streaming format."
    )


@pytest.mark.parametrize(
    ("provider", "data", "where"),
    [
        (PROVIDERS[0], '{"choices": 5}', "at `$.choices`"),
        (PROVIDERS[0], '{"choices": [{"delta": {"content": 5}}]}', "at `$.choices[0].delta.content`"),
        (PROVIDERS[0], '{"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}', "tool_calls[0].index"),
        (PROVIDERS[0], '{"choices": [{"delta": {"reasoning_content": 5}}]}', "reasoning_content` - at `$.choices[0]"),
        (PROVIDERS[1], '{"type": "content_block_delta", "index": 0, "delta": 5}', "got `int` - at `$.delta`"),
        (PROVIDERS[1], '{"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}', "index"),
        (
            PROVIDERS[1],
            '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}',
            "at `$.delta.text`",
        ),
        (PROVIDERS[1], '{"type": 5}', "at `$.type`"),
    ],
    ids=[
        "openai-choices",
        "openai-content",
        "openai-index",
        "openai-reasoning",
        "anthropic-delta",
        "anthropic-index",
        "anthropic-text",
        "anthropic-type",
    ],
)
async def test_a_chunk_of_the_wrong_shape_says_where(
    server: FakeProviderServer, provider: Provider, data: str, where: str
) -> None:
    error = await failure(provider, server, _malformed(provider, data))
    assert str(error).startswith(f"{provider.origin(server)} sent a malformed stream: a chunk has the wrong shape (")
    assert where in str(error)


@each_provider
async def test_a_cut_off_answer_in_a_session_is_retried_not_saved(
    provider: Provider, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.stream(STREAMS[provider.name](["It is "])[:-3]), provider.reply(["It is noon."]))
    recorder = Recorder()
    clock = ManualClock()
    async with provider.build(server) as model, Agent(model, clock=clock).running() as session:
        session.subscribe(recorder)
        session.send("What time is it?")
        await session.settled()
        clock.advance(60_000)
        await session.settled()
        state = session.state
    [failed] = [i for i in recorder.inputs if isinstance(i, LlmCallFailed)]
    assert failed.retryable and "was cut off" in failed.error
    assert [m.content for m in state.messages if m.role == "assistant" and m.content] == ["It is noon."]
