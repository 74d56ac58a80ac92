"""The MCP server over streamable HTTP: the SDK's app (which checks Host and Origin on loopback), behind the
authentication hook."""

from __future__ import annotations

from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .._host import SessionHost
from .._security import Authenticate, authenticated
from ._server import build

UNAUTHORIZED = -32001
"""The JSON-RPC error code of a request the authentication hook refused (a server-defined code)."""


class _Authenticated:
    """Lets a request through only when the hook lets it in; else 401 with a JSON-RPC error."""

    def __init__(self, app: ASGIApp, authenticate: Authenticate) -> None:
        self.app, self.authenticate = app, authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = await authenticated(self.authenticate, Request(scope, receive))
            if refusal is not None:
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": UNAUTHORIZED, "message": refusal}}
                await JSONResponse(error, status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_app(host: SessionHost, authenticate: Authenticate | None, allow_remote: bool, wait_seconds: float) -> Any:
    """The streamable HTTP app at ``/mcp``: loopback Host and Origin checked unless ``allow_remote``."""
    server = build(host, wait_seconds=wait_seconds)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if allow_remote else None
    app = server.streamable_http_app(transport_security=security)
    return app if authenticate is None else _Authenticated(app, authenticate)
