"""What a request must be before a handler of the viewer sees it: addressed to loopback, and a JSON body of a
known shape from the viewer's own page.

Any page open in the same browser can send requests to a loopback port, and a
name of its own that resolves to 127.0.0.1 (DNS rebinding) makes them
same-origin. So every request, read or write, must name a loopback address (or
the address the viewer was started on) in its ``Host``; a write must also be
JSON (a content type that needs a CORS preflight this app never grants) and,
when the browser says where it comes from, come from such an address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeVar
from urllib.parse import unquote, urlsplit

import msgspec
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MAX_BODY = 64 * 1024
"""The largest body a POST may carry (a decision's reason included), in bytes."""

T = TypeVar("T")
N = TypeVar("N", int, None)


class BadRequest(Exception):
    """A request the viewer refuses: ``status`` and a message saying what was expected."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def failed(status: int, message: str) -> JSONResponse:
    """The viewer's error response: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status)


class Gate:
    """ASGI middleware in front of every route: refuses a ``Host`` that is not loopback, and routes on the path
    as it was sent, so a session id holding ``/`` (sent as ``%2F``) stays one path segment.

    Path parameters reach the handlers with ``%`` and ``/`` escaped; :func:`param` undoes that.
    """

    def __init__(self, app: ASGIApp, hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.hosts = frozenset(h.lower().strip("[]") for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = Headers(scope=scope).get("host", "")
            if not self.allowed(host_name(header)):
                expected = ", ".join(sorted({"127.0.0.1", "localhost", "[::1]", *self.hosts}))
                message = f"expected a request to a loopback address ({expected}), got Host {header[:200]!r}"
                await failed(403, message)(scope, receive, send)
                return
            scope = {**scope, "path": _segments_as_sent(scope)}
        await self.app(scope, receive, send)

    def allowed(self, name: str) -> bool:
        """Whether a request naming host ``name`` may be answered: loopback, or the address the viewer serves."""
        return is_loopback(name) or name in self.hosts


def host_name(header: str) -> str:
    """The host of a ``Host`` header without its port: ``[::1]:8765`` gives ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def is_loopback(name: str) -> bool:
    """Whether ``name`` is ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _segments_as_sent(scope: Scope) -> str:
    raw = scope.get("raw_path")
    if not raw:
        return str(scope["path"])
    segments = raw.decode("latin-1").split("/")
    return "/".join(unquote(s).replace("%", "%25").replace("/", "%2F") for s in segments)


def param(request: Request, name: str) -> str:
    """A path parameter as the client meant it (``a%2Fb`` in the URL gives ``a/b``)."""
    return unquote(str(request.path_params[name]))


def number(request: Request, name: str, default: N) -> int | N:
    """The query parameter ``name`` as a whole number (at most 18 digits), or ``default`` when absent;
    :class:`BadRequest` saying what was expected otherwise."""
    values = request.query_params.getlist(name)
    if not values:
        return default
    if len(values) > 1 or not (values[0].isascii() and values[0].isdigit() and len(values[0]) <= 18):
        got = values[0] if len(values) == 1 else "&".join(f"{name}={v}" for v in values)
        raise BadRequest(400, f"expected ?{name}=N once, N a whole number; got {got[:100]!r}")
    return int(values[0])


def cross_site(request: Request, gate_hosts: Iterable[str] = ()) -> str | None:
    """Why a POST must be refused: not JSON, or sent by another site's page (its ``Origin``); ``None`` if fine."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "expected a JSON body (Content-Type: application/json)"
    origin = request.headers.get("origin")
    if origin is not None:
        name = (urlsplit(origin).hostname or "") if "://" in origin else ""
        if not (is_loopback(name) or name in gate_hosts):
            return f"expected a request from the viewer's own page, got Origin {origin[:200]!r}"
    return None


async def json_body(request: Request, shape: type[T], expected: str) -> T:
    """The request's body decoded as ``shape``; :class:`BadRequest` saying ``expected`` and what was wrong."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise BadRequest(413, f"the body is longer than {MAX_BODY} bytes; {expected}")
    try:
        text = body.decode()  # checked here: msgspec's word for it changed between releases
    except UnicodeDecodeError:
        raise BadRequest(400, f"{expected}; the body is not UTF-8") from None
    try:
        return msgspec.json.decode(text, type=shape)
    except msgspec.DecodeError as error:  # ValidationError too: "Expected `bool`, got `str` - at `$.approve`"
        raise BadRequest(400, f"{expected}; {error}") from None
