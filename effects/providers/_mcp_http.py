"""The HTTP client of an MCP server over streamable HTTP, with a bound on what one response may bring.

The SDK bounds each Server-Sent Event (1 MiB by default) but reads a JSON
response whole, however large: a server answering ``tools/call`` or
``tools/list`` with a body of gigabytes would fill this process's memory
before any result is cut to ``max_result_chars``. Here a response that is not
an event stream is cut off past :data:`MAX_RESPONSE_BYTES`; the call then fails
with the reason, which the model reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own client timeouts: 30 s to connect, write or wait for the pool; 300 s between reads (a server
may hold an event stream open)."""

MAX_RESPONSE_BYTES = 16_000_000
"""The most bytes read of one JSON response from an MCP server (an event stream is bounded per event by the SDK)."""


class ResponseTooLarge(httpx2.StreamError):
    """A response from an MCP server passed :data:`MAX_RESPONSE_BYTES`."""


class _Bounded(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, url: str) -> None:
        self._stream, self._url = stream, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > MAX_RESPONSE_BYTES:
                raise ResponseTooLarge(
                    f"the response from {self._url} passed {MAX_RESPONSE_BYTES:,} bytes; expected a smaller one"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


async def _bounded(response: httpx2.Response) -> None:
    """A response hook: a body that is not an event stream is read through :class:`_Bounded` (whatever transport
    brought it, a proxy's included)."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        response.stream = _Bounded(response.stream, str(response.request.url))


def bounded_client() -> httpx2.AsyncClient:
    """A client like the SDK's own (its timeouts; redirects are followed by the SDK, within the server's origin)
    whose responses are bounded; enter it, then hand it to ``streamable_http_client``."""
    return httpx2.AsyncClient(timeout=TIMEOUT, event_hooks={"response": [_bounded]})
