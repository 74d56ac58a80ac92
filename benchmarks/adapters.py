"""Benchmark of the model adapters: their overhead per streamed chunk, against the raw SDK stream.

Run ``python benchmarks/adapters.py --help`` for what each measurement means.
Prints a table and writes ``benchmarks/results/adapters.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import multiprocessing
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import anthropic
import openai

from agent_core import SessionStarted, ToolDefinition, UserMessageReceived, llm_context, replay
from effects.providers import AnthropicModel, OpenAIModel
from effects.providers._anthropic_stream import read_events
from effects.providers._openai_stream import read_stream
from effects.testing import FakeProviderServer, FakeToolCall, RecordedRequest, Reply, anthropic_stream, openai_stream

HELP = """\
Measurements (time.perf_counter_ns, interleaved runs after a warm-up; median and min per chunk):

1. end to end   One streamed response of N chunks (default 1,000) from a local server on a loopback
                port: the raw SDK call iterating its stream (`async for chunk in stream`), and the
                adapter's complete() (request mapping, the same SDK stream, folding every chunk into a
                ModelReply, text to on_text). Shapes: "text" (N text deltas) and "tools" (4 parallel
                tool calls whose arguments arrive in N pieces). overhead = adapter - raw, per chunk.
2. fold only    The adapter's fold over the N chunks already parsed by the SDK, against a bare
                `async for` over the same list: the adapter's own cost with no network or parsing.
Target: adapter overhead below 5% of the raw SDK iteration, end to end."""

TOOL = ToolDefinition(name="lookup", description="Look something up.", parameters='{"type":"object"}')


def _text(chunks: int) -> list[str]:
    return [f"word{i} " for i in range(chunks)]


def _calls(chunks: int) -> list[FakeToolCall]:
    per_call = chunks // 4
    return [
        FakeToolCall(f"call_{k}", "lookup", ['{"q": "', *("x" for _ in range(per_call - 2)), '"}']) for k in range(4)
    ]


def answer(request: RecordedRequest, chunks: int) -> Reply:
    """The server's reply: the provider's stream shape for the request's path, text or tools by model name."""
    return _reply(request.path.endswith("/messages"), request.body["model"] == "tools", chunks)


@functools.cache
def _reply(anthropic_shape: bool, tools: bool, chunks: int) -> Reply:
    text, calls = ((), _calls(chunks)) if tools else (_text(chunks), ())
    stream = anthropic_stream if anthropic_shape else openai_stream
    return Reply.stream(stream(text, calls))


def _serve(connection: Connection, chunks: int) -> None:
    """The scripted server, in its own process so that it does not share the client's interpreter lock."""
    with FakeProviderServer(default=lambda request: answer(request, chunks)) as server:
        connection.send(server.url)
        connection.recv()  # serve until the benchmark says it is done


@contextlib.contextmanager
def server_process(chunks: int) -> Iterator[str]:
    """The URL of a scripted server running in a child process for the duration of the block."""
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(target=_serve, args=(theirs, chunks), daemon=True)
    process.start()
    try:
        yield ours.recv()
    finally:
        ours.send("stop")
        process.join()


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
        timings = c.measure_each(_end_to_end(loop, raw, client, adapter, shape, context), ops=ops, repeat=repeat)
        folds = c.measure_each(_fold_only(loop, fold, parsed), ops=ops, repeat=repeat * 4)
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


def report(rows: list[dict[str, Any]]) -> str:
    """The table of microseconds per chunk."""
    us = 1e-3
    lines = []
    for row in rows:
        raw, adapter, bare, fold = row["raw"], row["adapter"], row["bare"], row["fold"]
        overhead = adapter.median_ns - raw.median_ns
        lines.append(
            (
                row["provider"],
                row["shape"],
                row["chunks"],
                f"{raw.median_ns * us:.2f}",
                f"{adapter.median_ns * us:.2f}",
                f"{overhead * us:+.2f}",
                f"{100 * overhead / raw.median_ns:+.1f}%",
                f"{(fold.median_ns - bare.median_ns) * us:.3f}",
            )
        )
    headers = (
        "provider",
        "shape",
        "chunks",
        "raw us/chunk",
        "adapter us/chunk",
        "overhead",
        "overhead %",
        "fold us/chunk",
    )
    return c.table(headers, lines)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1000, help="chunks per streamed response (default 1000)")
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per measurement (default 15)")
    args = parser.parse_args(argv)
    with server_process(args.chunks) as url:
        rows = [row for name in ("openai", "anthropic") for row in measure_provider(name, url, args.repeat)]
    print(report(rows))
    path = c.write_results("adapters", {"chunks": args.chunks, "repeat": args.repeat, "rows": rows})
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
