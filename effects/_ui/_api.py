"""The viewer's HTTP handlers (Starlette). Imported only when an app is created: Starlette is an optional extra."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_core import phase

from .._store import ConcurrencyError, EventStore, SessionNotFound, fork_session, load_state
from ._assets import ASSETS, asset, media_type
from ._decide import DecisionRefused, decide
from ._records import record_view
from ._verify import verify_view
from ._view import session_view

DECISION = 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}'


class Api:
    """One method per route, over one store. Work on the store runs in a worker thread."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    async def page(self, request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in ASSETS:
            return _failed(404, f"no asset {name!r}; the page has {', '.join(ASSETS)}")
        return Response(asset(name), media_type=media_type(name))

    async def sessions(self, request: Request) -> Response:
        def listed() -> list[dict[str, Any]]:
            infos = self.store.sessions()
            return [
                {**msgspec.to_builtins(i), "phase": phase(load_state(self.store, i.session_id)).value} for i in infos
            ]

        return await _guarded(listed)

    async def session(self, request: Request) -> Response:
        return await _guarded(lambda: session_view(self.store, request.path_params["sid"]))

    async def head(self, request: Request) -> Response:
        return await _guarded(lambda: {"length": self.store.session(request.path_params["sid"]).length})

    async def record(self, request: Request) -> Response:
        params = request.path_params
        return await _guarded(lambda: record_view(self.store, params["sid"], params["seq"]))

    async def verify(self, request: Request) -> Response:
        return await _guarded(lambda: verify_view(self.store, request.path_params["sid"]))

    async def decision(self, request: Request) -> Response:
        if (refused := _cross_site(request)) is not None:
            return _failed(403, refused)
        body = await _body(request)
        if not isinstance(body, dict) or not isinstance(body.get("tool_call_id"), str):
            return _failed(400, DECISION)
        sid, call_id = request.path_params["sid"], body["tool_call_id"]
        approve, reason = bool(body.get("approve")), str(body.get("reason", ""))
        return await _guarded(lambda: {"seq": decide(self.store, sid, call_id, approve=approve, reason=reason)})

    async def fork(self, request: Request) -> Response:
        if (refused := _cross_site(request)) is not None:
            return _failed(403, refused)
        body = await _body(request)
        if not isinstance(body, dict) or not isinstance(body.get("at"), int):
            return _failed(400, 'expected {"at": N}, the last record to copy')
        sid, at = request.path_params["sid"], body["at"]
        return await _guarded(lambda: {"session_id": fork_session(self.store, sid, at).session_id})


async def _guarded(work: Callable[[], Any]) -> Response:
    """Run ``work`` in a thread; errors a person can cause become JSON ``{"error": ...}`` with a status."""
    try:
        data = await anyio.to_thread.run_sync(work)
    except SessionNotFound as error:
        return _failed(404, str(error))
    except (DecisionRefused, ConcurrencyError) as error:
        return _failed(409, str(error))
    except ValueError as error:
        return _failed(400, str(error))
    return Response(msgspec.json.encode(data), media_type="application/json")


def _failed(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _cross_site(request: Request) -> str | None:
    """Why a POST must be refused: not JSON, not addressed to a loopback host, or sent by another site's page.

    A page of any site open in the same browser can POST to a loopback port; a JSON content type needs a CORS
    preflight this app never grants, and the Host and Origin checks stop a DNS-rebound name.
    """
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "expected a JSON body (Content-Type: application/json)"
    host = request.headers.get("host", "").rsplit(":", 1)[0]
    if host not in LOOPBACK_HOSTS:
        return f"expected a request to a loopback address, got Host {host!r}"
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1].rsplit(":", 1)[0] not in LOOPBACK_HOSTS:
        return f"expected a request from the viewer's own page, got Origin {origin!r}"
    return None


async def _body(request: Request) -> Any:
    try:
        return msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        return None
