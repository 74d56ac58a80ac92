"""The adapters benchmark's timings of one provider: the raw SDK stream against the adapter's complete(), end to
end, and the adapter's fold over chunks already parsed against a bare iteration."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import anthropic
import openai
from _common import measure_each

from agent_core import SessionStarted, ToolDefinition, UserMessageReceived, llm_context, replay
from effects.providers import AnthropicModel, OpenAIModel
from effects.providers._anthropic_stream import read_events
from effects.providers._openai_stream import read_stream

TOOL = ToolDefinition(name="lookup", description="Look something up.", parameters='{"type":"object"}')


async def raw_openai(client: Any, model: str) -> None:
    """The bare SDK: create the stream and iterate it."""
    stream = await client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Go"}], stream=True, stream_options={"include_usage": True}
    )
    async with stream:
        async for _ in stream:
            pass


async def raw_anthropic(client: Any, model: str) -> None:
    """The bare SDK: create the stream and iterate it."""
    stream = await client.messages.create(
        model=model, max_tokens=4096, messages=[{"role": "user", "content": "Go"}], stream=True
    )
    async with stream:
        async for _ in stream:
            pass


async def _listed(items: Iterable[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


async def _bare(items: list[Any]) -> None:
    async for _ in _listed(items):
        pass


def _runner(loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[object]]) -> Callable[[], None]:
    return lambda: loop.run_until_complete(work())  # type: ignore[return-value]


def measure_provider(name: str, url: str, repeat: int) -> list[dict[str, Any]]:
    """End-to-end and fold-only timings of one provider, for both shapes."""
    loop = asyncio.new_event_loop()
    context = llm_context(
        replay(
            [
                SessionStarted(timestamp=1, session_id="bench", tools=(TOOL,)),
                UserMessageReceived(timestamp=2, message_id="u", content="Go"),
            ]
        )
    )
    rows: list[dict[str, Any]] = []
    for shape in ("text", "tools"):
        if name == "openai":
            client: Any = openai.AsyncOpenAI(api_key="sk-bench", base_url=url + "/v1", max_retries=0)
            adapter: OpenAIModel | AnthropicModel = OpenAIModel(shape, base_url=url + "/v1", api_key="sk-bench")
            raw, fold = raw_openai, read_stream
        else:
            client = anthropic.AsyncAnthropic(api_key="sk-bench", base_url=url, max_retries=0)
            adapter = AnthropicModel(shape, base_url=url, api_key="sk-bench")
            raw, fold = raw_anthropic, read_events
        parsed = loop.run_until_complete(_parsed(client, shape, name))
        ops = len(parsed)  # the chunks of one response, with the role, finish and usage chunks
        timings = measure_each(_end_to_end(loop, raw, client, adapter, shape, context), ops=ops, repeat=repeat)
        folds = measure_each(_fold_only(loop, fold, parsed), ops=ops, repeat=repeat * 4)
        loop.run_until_complete(adapter.aclose())
        loop.run_until_complete(client.close())
        rows.append({"provider": name, "shape": shape, "chunks": len(parsed), **timings, **folds})
    loop.close()
    return rows


def _end_to_end(
    loop: asyncio.AbstractEventLoop, raw: Any, client: Any, adapter: Any, model: str, context: Any
) -> dict[str, Callable[[], object]]:
    return {
        "raw": _runner(loop, lambda: raw(client, model)),
        "adapter": _runner(loop, lambda: adapter.complete(context, lambda _: None)),
    }


def _fold_only(loop: asyncio.AbstractEventLoop, fold: Any, parsed: list[Any]) -> dict[str, Callable[[], object]]:
    return {
        "bare": _runner(loop, lambda: _bare(parsed)),
        "fold": _runner(loop, lambda: fold(_listed(parsed), lambda _: None)),
    }


async def _parsed(client: Any, model: str, name: str) -> list[Any]:
    """The chunks (events) the SDK parses from one response, for the fold-only timing."""
    if name == "openai":
        stream = await client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    else:
        stream = await client.messages.create(
            model=model, max_tokens=4096, messages=[{"role": "user", "content": "Go"}], stream=True
        )
    async with stream:
        return [item async for item in stream]
