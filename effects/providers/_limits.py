"""Bounds on what a provider streams: one event, the whole body, and the answer folded from it.

The SDKs read an event stream without a limit: a line is buffered until it
ends, however long (a 254 KB gzip body inflating to one 256 MB line grew a
process by a gigabyte). So every response body an adapter's HTTP client reads
passes through :func:`bounded_bodies` first, a response hook on the SDK's own
default client: it counts the body's bytes after the HTTP library decompressed
them (which it does in small pieces) and raises
:class:`StreamTooLarge` as soon as an event, or the body, passes its bound, so
no buffer ever holds more than one event's bound. The folds count the answer
they keep with :class:`AnswerSize`. The adapters' shared ``complete``
turns :class:`StreamTooLarge` into a :class:`~effects.ModelError` that is not
retryable and names the provider, the URL and the bound.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

MIB = 1024 * 1024

_TERMINATOR = re.compile(rb"\r\n|\r|\n")
_RAW_PIECE = 16 * 1024  # compressed bytes handed to the decompressor at once, whatever the network read


@dataclass(frozen=True)
class StreamLimits:
    """How much one model call may receive (pass ``stream_limits=StreamLimits(...)`` to an adapter).

    ``event_bytes``: one server-sent event (its lines up to the empty line that
    ends it, without their line ends), as decompressed; a Responses-API ``response.completed`` event
    repeats the whole answer, so this is also the largest answer that API can
    give. ``event_lines``: the lines of one event (providers send one or two; an
    SDK copies an event's bytes once per line). ``body_bytes``: the whole
    response body, compressed and decompressed alike. ``answer_chars``: the
    characters the reply keeps, counted as they stream: its text, its tool
    calls' ids, names and arguments, and its provider items (thinking,
    reasoning) as JSON.
    """

    event_bytes: int = 16 * MIB
    event_lines: int = 64
    body_bytes: int = 256 * MIB
    answer_chars: int = 20_000_000

    def __post_init__(self) -> None:
        for name in ("event_bytes", "event_lines", "body_bytes", "answer_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"StreamLimits.{name} must be a positive int; got {value!r}")


class StreamTooLarge(Exception):
    """A response body or an answer passed a bound of :class:`StreamLimits`; the message says which."""


class AnswerSize:
    """The characters a fold has kept so far, against :attr:`StreamLimits.answer_chars`."""

    __slots__ = ("chars", "limit")

    def __init__(self, limit: int) -> None:
        self.chars = 0
        self.limit = limit

    def add(self, chars: int) -> None:
        """Count ``chars`` more; raise :class:`StreamTooLarge` past the limit."""
        self.chars += chars
        if self.chars > self.limit:
            raise StreamTooLarge(
                f"streamed an answer of more than {self.limit:,} characters (its text, tool calls and provider items "
                "together; StreamLimits.answer_chars)"
            )


class _Events:
    """Counts the bytes of an event stream as they pass, chunk by chunk: the event not yet ended (the bytes of its
    lines, their ends not counted, and how many) and the whole body. A line ends at CR, LF or CRLF (a CRLF may be
    split between chunks); an empty line ends an event, as the SSE format and the SDKs read it."""

    __slots__ = ("body", "event", "limits", "line", "lines", "split_crlf")

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self.body = self.event = self.line = self.lines = 0
        self.split_crlf = False  # the last chunk ended in CR: an LF starting the next one belongs to it

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        limits = self.limits
        self.body += len(chunk)
        if self.body > limits.body_bytes:
            raise StreamTooLarge(
                f"sent a response body of more than {limits.body_bytes:,} bytes (StreamLimits.body_bytes)"
            )
        start = 1 if self.split_crlf and chunk[:1] == b"\n" else 0
        for match in _TERMINATOR.finditer(chunk, start):
            length = self.line + match.start() - start
            if length == 0:  # an empty line: the event ends
                self.event = self.lines = 0
            else:
                self.event += length
                self.lines += 1
                self._check(0)
            self.line, start = 0, match.end()
        self.line += len(chunk) - start
        self.split_crlf = chunk.endswith(b"\r")
        self._check(self.line)

    def _check(self, unended: int) -> None:
        limits = self.limits
        if self.event + unended > limits.event_bytes:
            raise StreamTooLarge(f"sent an event of more than {limits.event_bytes:,} bytes (StreamLimits.event_bytes)")
        if self.lines > limits.event_lines:
            raise StreamTooLarge(f"sent an event of more than {limits.event_lines:,} lines (StreamLimits.event_lines)")


def bounded_bodies(http: ModuleType, limits: StreamLimits) -> Callable[[Any], Awaitable[None]]:
    """A response hook for an ``AsyncClient`` of ``http`` (httpx or httpx2) that bounds every body it reads.

    The hook hands the body to the library's own decoding (``Content-Encoding``:
    gzip, deflate, zstd... in small pieces), counts what comes out, and gives the
    response that decoded body in place of the raw one.
    """

    class Raw(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        """The body as it came, in pieces of at most 16 KiB, counted against ``body_bytes``."""

        def __init__(self, stream: Any) -> None:
            self.stream, self.bytes = stream, 0

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.stream:
                self.bytes += len(chunk)
                if self.bytes > limits.body_bytes:
                    raise StreamTooLarge(
                        f"sent a response body of more than {limits.body_bytes:,} bytes (StreamLimits.body_bytes)"
                    )
                for at in range(0, len(chunk), _RAW_PIECE):
                    yield chunk[at : at + _RAW_PIECE]

        async def aclose(self) -> None:
            await self.stream.aclose()

    class Decoded(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        """The body decompressed, each piece counted before anything buffers it."""

        def __init__(self, response: Any) -> None:
            self.response = response

        async def __aiter__(self) -> AsyncIterator[bytes]:
            events = _Events(limits)
            async for chunk in self.response.aiter_bytes():
                events.feed(chunk)
                yield chunk

        async def aclose(self) -> None:
            await self.response.aclose()

    async def hook(response: Any) -> None:
        encoded = http.Response(
            response.status_code, headers=response.headers.copy(), stream=Raw(response.stream), request=response.request
        )
        response.stream = Decoded(encoded)
        for name in ("content-encoding", "content-length"):  # the bytes the response now reads are decoded
            response.headers.pop(name, None)

    return hook


def bounded_client(sdk: ModuleType, http: ModuleType, limits: StreamLimits) -> Any:
    """The SDK's default async HTTP client (its timeouts, connection limits, proxies), reading bounded bodies."""
    return sdk.DefaultAsyncHttpxClient(event_hooks={"response": [bounded_bodies(http, limits)]})
