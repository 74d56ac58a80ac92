"""Who may use a protocol endpoint: loopback only by default, no cross-origin writes, and an authentication hook.

Every endpoint a protocol serves can write into a session's log (a message, an
approval), so the rules are the viewer's: a write must be a JSON request
addressed to a loopback host and, when a browser names its page's origin, sent
from a loopback page too. A page of any site open in the same browser can POST
to a loopback port; a JSON content type needs a CORS preflight these apps never
grant, and the Host and Origin checks stop a DNS-rebound name. Servers bind to
loopback unless told otherwise (:func:`loopback_host`).

``authenticate`` is the hook for anything more: a callable given the request
(a Starlette ``Request``), returning true to let it in (sync or async). A
request it refuses gets the protocol's error shape with status 401; so does one
whose hook raises :class:`Unauthorized` with a message of its own.
"""

from __future__ import annotations

import inspect
import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any

Authenticate = Callable[[Any], "bool | Awaitable[bool]"]
"""The authentication hook: given the request, true to let it in (may be async)."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")

MAX_BODY_BYTES = 4_000_000
"""The largest request body an endpoint accepts (a run request: a conversation of messages)."""

TOO_LARGE = f"the request body exceeds {MAX_BODY_BYTES:,} bytes; expected a smaller request"


def declared_too_large(headers: Any) -> bool:
    """Whether the request's ``Content-Length`` already says its body is over :data:`MAX_BODY_BYTES`."""
    length = headers.get("content-length", "")
    return length.isdigit() and int(length) > MAX_BODY_BYTES


def bounded(receive: Any) -> Any:
    """``receive`` that raises Starlette's ``HTTPException(413)`` once the body passes :data:`MAX_BODY_BYTES`
    (a body sent in chunks, with no length declared, is counted as it arrives)."""
    from starlette.exceptions import HTTPException

    seen = 0

    async def limited() -> Any:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise HTTPException(413, TOO_LARGE)
        return message

    return limited


class Unauthorized(Exception):
    """Raised by an authentication hook to refuse a request with its own message (status 401)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_host(host: str, *, allow_remote: bool = False) -> str:
    """``host`` if a server may bind to it: a loopback address, or any with ``allow_remote`` (then put an
    ``authenticate`` hook in front: the endpoints write into sessions' logs). Else ``ValueError``."""
    if allow_remote or is_loopback(host):
        return host
    raise ValueError(
        f"expected a loopback address to serve on (127.0.0.1, ::1, localhost), got {host!r}: the endpoints "
        "write into sessions' logs; to serve elsewhere, pass allow_remote and an authenticate hook"
    )


def cross_site(headers: Any, *, write: bool, allow_remote: bool = False) -> str | None:
    """Why a request must be refused (not JSON, not addressed to a loopback host, sent by another site's page),
    or ``None``. A read (``write=False``) is held to the host check only; ``allow_remote`` lifts the host
    and origin checks (a server exposed on purpose, behind its ``authenticate`` hook)."""
    if write and headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "expected a JSON body (Content-Type: application/json)"
    if allow_remote:
        return None
    host = _hostname(headers.get("host", ""))
    if not is_loopback(host):
        return f"expected a request to a loopback address, got Host {host!r}"
    origin = headers.get("origin")
    if write and origin is not None and not is_loopback(_hostname(origin.split("://", 1)[-1])):
        return f"expected a request from a loopback page, got Origin {origin!r}"
    return None


def _hostname(authority: str) -> str:
    """The host of a Host header or of an origin's authority, without its port (``[::1]`` kept whole)."""
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0]


async def authenticated(authenticate: Authenticate | None, request: Any) -> str | None:
    """Why the hook refuses ``request`` (``None``: it may pass). An exception other than :class:`Unauthorized`
    raised by the hook is a bug in it and propagates."""
    if authenticate is None:
        return None
    try:
        allowed = authenticate(request)
        if inspect.isawaitable(allowed):
            allowed = await allowed
    except Unauthorized as refusal:
        return str(refusal) or "the request was refused by the server's authentication"
    if not allowed:
        return "expected credentials the server's authentication accepts; the request carried none it accepts"
    return None
