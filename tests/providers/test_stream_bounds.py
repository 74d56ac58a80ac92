"""What a provider may send to one model call is bounded: one event, the whole body (compressed or not), and the
answer the adapter keeps. Past a bound the call fails, not retryable, naming the provider, the URL and the bound;
nothing buffers more than one event's bound first (a gzip bomb is refused as it inflates)."""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core import LlmCallFailed, ReActObserved, ToolCallCompleted, ToolFailure
from effects import Agent, ModelError, tool
from effects.providers import StreamLimits
from effects.testing import (
    FakeProviderServer,
    FakeToolCall,
    ManualClock,
    Reply,
    anthropic_reply,
    anthropic_stream,
    openai_stream,
    responses_stream,
)

from ._conversation import first_question
from ._providers import PROVIDERS, Provider, complete
from .test_agent import Recorder

pytestmark = pytest.mark.anyio
STREAMS: dict[str, Callable[..., list[str]]] = {
    "openai": openai_stream,
    "anthropic": anthropic_stream,
    "responses": responses_stream,
}
each_provider = pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
NOT_RETRYABLE = ". Not retryable: the server sent more than a model's answer can be."


async def failure(provider: Provider, server: FakeProviderServer, reply: Reply, limits: StreamLimits) -> ModelError:
    server.enqueue(reply)
    with pytest.raises(ModelError) as info:
        await complete(provider.build(server, stream_limits=limits), first_question())
    return info.value


def body(provider: Provider, text: list[str], end: bytes = b"\n") -> bytes:
    """The provider's stream for ``text`` as one body, each line ended by ``end``."""
    events = STREAMS[provider.name](text)
    return b"".join(event.encode().replace(b"\n", end) + end + end for event in events)


@each_provider
async def test_an_event_past_its_bound_fails_the_call(provider: Provider, server: FakeProviderServer) -> None:
    reply = Reply.stream([body(provider, ["x" * 5000])])
    error = await failure(provider, server, reply, StreamLimits(event_bytes=4096))
    assert not error.retryable
    assert str(error) == (
        f"{provider.origin(server)} sent an event of more than 4,096 bytes (StreamLimits.event_bytes){NOT_RETRYABLE}"
    )


@each_provider
async def test_an_event_of_too_many_lines_fails_the_call(provider: Provider, server: FakeProviderServer) -> None:
    reply = Reply.stream([b": keep-alive\n" * 100, body(provider, ["Hi."])])
    error = await failure(provider, server, reply, StreamLimits(event_lines=64))
    assert str(error).endswith(f" sent an event of more than 64 lines (StreamLimits.event_lines){NOT_RETRYABLE}")


@each_provider
async def test_a_body_past_its_bound_fails_the_call(provider: Provider, server: FakeProviderServer) -> None:
    pings = [b": ping\n\n"] * 2000  # 16,000 bytes of comments, each event small
    error = await failure(
        provider, server, Reply.stream([*pings, body(provider, ["Hi."])]), StreamLimits(body_bytes=10_000)
    )
    assert str(error).endswith(
        f" sent a response body of more than 10,000 bytes (StreamLimits.body_bytes){NOT_RETRYABLE}"
    )


@each_provider
async def test_an_answer_past_its_bound_fails_the_call(provider: Provider, server: FakeProviderServer) -> None:
    reply = provider.reply(["x" * 600, "y" * 600])  # each event within its bound, the answer not
    error = await failure(provider, server, reply, StreamLimits(answer_chars=1000))
    assert str(error) == (
        f"{provider.origin(server)} streamed an answer of more than 1,000 characters (its text, tool calls and "
        f"provider items together; StreamLimits.answer_chars){NOT_RETRYABLE}"
    )


@each_provider
async def test_tool_call_arguments_count_toward_the_answer(provider: Provider, server: FakeProviderServer) -> None:
    calls = [FakeToolCall("c1", "lookup", ['{"q": "', "x" * 700, '"}']), FakeToolCall("c2", "lookup", ["{}" * 200])]
    reply = Reply.stream(STREAMS[provider.name]([], calls))
    error = await failure(provider, server, reply, StreamLimits(answer_chars=1000))
    assert "streamed an answer of more than 1,000 characters" in str(error)


@each_provider
async def test_a_gzip_bomb_fails_as_it_inflates(provider: Provider, server: FakeProviderServer) -> None:
    """64 MiB of one line in 64 KB of gzip: refused at the event's bound (1 MiB here), never inflated whole."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip member
    line = b"data: " + b"x" * (1024 * 1024)
    bomb = squeeze.compress(line) + b"".join(squeeze.compress(b"x" * 1024 * 1024) for _ in range(63))
    bomb += squeeze.flush()
    assert len(bomb) < 100_000
    reply = Reply.stream([bomb], headers={"content-encoding": "gzip"})
    error = await failure(provider, server, reply, StreamLimits(event_bytes=1024 * 1024))
    assert "sent an event of more than 1,048,576 bytes (StreamLimits.event_bytes)" in str(error)


@each_provider
async def test_a_compressed_stream_within_the_bounds_is_read(provider: Provider, server: FakeProviderServer) -> None:
    reply = Reply.stream([gzip.compress(body(provider, ["It is ", "noon."]))], headers={"content-encoding": "gzip"})
    server.enqueue(reply)
    result = await complete(provider.build(server), first_question())
    assert result.text == "It is noon."


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    provider=st.sampled_from(PROVIDERS),
    texts=st.lists(st.text(alphabet='ab\u00e9\u4e2d"\\', min_size=1, max_size=400), min_size=1, max_size=6),
    end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(0, 10**6), max_size=12),
    compressed=st.booleans(),
    limit=st.integers(200, 2000),
)
async def test_a_stream_is_read_exactly_when_every_event_is_within_the_bound(
    server: FakeProviderServer,
    provider: Provider,
    texts: list[str],
    end: bytes,
    cuts: list[int],
    compressed: bool,
    limit: int,
) -> None:
    """Any text, any line ends, the body cut anywhere, gzip or not: the answer comes whole when its longest event
    is within ``event_bytes``, and the call fails naming the bound when it is not."""
    data = body(provider, texts, end)
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    longest = max(sum(len(line) for line in event.split(b"\n")) for event in b"\n".join(lines).split(b"\n\n"))
    # An event's size is the bytes of its lines up to the empty line, line ends left out (Anthropic's events
    # have two lines, an event name and its data).
    sent = gzip.compress(data) if compressed else data
    headers = {"content-encoding": "gzip"} if compressed else {}
    server.enqueue(Reply.stream(chunked(sent, cuts), headers=headers))
    adapter = provider.build(server, stream_limits=StreamLimits(event_bytes=limit))
    if longest <= limit:
        assert (await complete(adapter, first_question())).text == "".join(texts)
    else:
        with pytest.raises(ModelError, match=f"sent an event of more than {limit:,} bytes"):
            await complete(adapter, first_question())


def test_limits_are_positive_ints() -> None:
    for bad in (0, -1, 1.5, True, "8"):
        with pytest.raises(ValueError, match=r"StreamLimits\.event_bytes must be a positive int"):
            StreamLimits(event_bytes=bad)  # type: ignore[arg-type]


async def test_arguments_streamed_50000_deep_fail_the_call_visibly_and_the_next_request_is_built(
    server: FakeProviderServer,
) -> None:
    """Anthropic streams a call's arguments as ``input_json_delta`` pieces: 50,000 brackets deep, the tool call
    fails with a result the model reads, and the next request carries the call (with ``{}`` as its input)."""

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    deep = '{"q": ' + "[" * 50_000 + "]" * 50_000 + "}"
    pieces = [deep[at : at + 1000] for at in range(0, len(deep), 1000)]
    server.enqueue(
        anthropic_reply([], [FakeToolCall("toolu_1", "lookup", pieces)], stop_reason="tool_use"),
        anthropic_reply(["The lookup failed."]),
    )
    recorder = Recorder()
    async with PROVIDERS[1].build(server) as model, Agent(model, tools=[lookup], clock=ManualClock()).running() as s:
        s.subscribe(recorder)
        s.send("Look it up.")
        await s.settled()
        state = s.state
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert not [i for i in recorder.inputs if isinstance(i, LlmCallFailed)]
    observed = [i for i in recorder.inputs if isinstance(i, ReActObserved)]
    [completed] = [i for i in recorder.inputs if isinstance(i, ToolCallCompleted)]
    assert isinstance(completed.result, ToolFailure) and "recursion limit exceeded" in completed.result.error
    second = server.requests[-1].body
    [use] = [b for m in second["messages"] for b in m["content"] if b["type"] == "tool_use"]
    [result] = [b for m in second["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert use["input"] == {} and result["is_error"] and "recursion limit exceeded" in json.dumps(result["content"])
    assert len(observed) == 2  # the call, then the answer that read its failure
