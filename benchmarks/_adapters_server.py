"""The adapters benchmark's scripted provider server: streamed replies of N chunks, text or tool calls, in the
OpenAI or the Anthropic shape, served from a child process on a loopback port."""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
from collections.abc import Iterator
from multiprocessing.connection import Connection

from effects.testing import FakeProviderServer, FakeToolCall, RecordedRequest, Reply, anthropic_stream, openai_stream


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
