"""The A2A app (Starlette): the agent card, and the JSON-RPC endpoint (A2A 1.0, and 0.3's method names)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.constants import PROTOCOL_VERSION_1_0
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .._host import SessionHost
from .._security import TOO_LARGE, Authenticate, authenticated, bounded, cross_site, declared_too_large
from ._handler import SessionTasks

INVALID_REQUEST = -32600
UNAUTHORIZED = -32001


class _Guard:
    """The loopback and cross-origin rules, then the authentication hook, then the body's size (the SDK reads
    the whole body: a larger one is cut off as it arrives and answered "Payload too large"); a refusal is a
    JSON-RPC error."""

    def __init__(self, app: ASGIApp, authenticate: Authenticate | None, allow_remote: bool) -> None:
        self.app, self.authenticate, self.allow_remote = app, authenticate, allow_remote

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            write = request.method not in ("GET", "HEAD", "OPTIONS")
            refusal = cross_site(request.headers, write=write, allow_remote=self.allow_remote)
            code, status = INVALID_REQUEST, 403
            if refusal is None:
                refusal, code, status = await authenticated(self.authenticate, request), UNAUTHORIZED, 401
            if refusal is None and declared_too_large(request.headers):
                refusal, code, status = TOO_LARGE, INVALID_REQUEST, 413
            if refusal is not None:
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": refusal}}
                await JSONResponse(error, status_code=status)(scope, receive, send)
                return
            receive = bounded(receive)
        await self.app(scope, receive, send)


def agent_card(url: str, name: str, description: str, skills: Sequence[AgentSkill], version: str) -> AgentCard:
    """The card: one JSON-RPC interface at ``url``, streaming, text and JSON in, text out."""
    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION_1_0)
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=list(skills)
        or [AgentSkill(id="chat", name="chat", description=description, tags=["chat"], examples=[])],
    )


def build_app(
    host: SessionHost,
    *,
    url: str,
    name: str,
    description: str,
    skills: Sequence[AgentSkill],
    version: str,
    authenticate: Authenticate | None,
    allow_remote: bool,
    wait_seconds: float,
) -> Any:
    """The app: ``/.well-known/agent-card.json`` and the JSON-RPC endpoint at ``/``."""
    handler = SessionTasks(host, wait_seconds)
    card = agent_card(url, name, description, skills, version)
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)]
    return _Guard(Starlette(routes=routes), authenticate, allow_remote)
