"""The viewer's ASGI app (Starlette): the page, its assets, and a small JSON API over one store.

Needs the ``ui`` extra (``pip install 'agent-core[ui]'``). Serve it on
loopback only (``agent-core ui DB``): it can write decisions into the log.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import anyio.to_thread
import msgspec

from agent_core import phase

from .._store import ConcurrencyError, EventStore, SessionNotFound, fork_session, load_state
from ._decide import DecisionRefused, decide
from ._records import record_view
from ._verify import verify_view
from ._view import session_view

ASSETS = ("index.html", "app.js", "app.css")
_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


def asset(name: str) -> str:
    """The text of one of the page's files, shipped inside the package."""
    return resources.files("effects._ui").joinpath("assets", name).read_text(encoding="utf-8")


def create_app(store: EventStore) -> Any:
    """A Starlette app showing the sessions of ``store`` (which stays open; close it after the server stops)."""
    try:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route
    except ImportError:
        raise ImportError("the session viewer needs Starlette and uvicorn: pip install 'agent-core[ui]'") from None

    def json(data: Any, status: int = 200) -> Response:
        return Response(msgspec.json.encode(data), status_code=status, media_type="application/json")

    def failed(status: int, message: str) -> Response:
        return JSONResponse({"error": message}, status_code=status)

    async def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in ASSETS:
            return failed(404, f"no asset {name!r}; the page has {', '.join(ASSETS)}")
        return Response(asset(name), media_type=_TYPES[name.rsplit(".", 1)[1]])

    async def guarded(call: Any, *args: Any, **kwargs: Any) -> Response:
        try:
            return json(await anyio.to_thread.run_sync(lambda: call(*args, **kwargs)))
        except SessionNotFound as error:
            return failed(404, str(error))
        except (DecisionRefused, ConcurrencyError) as error:
            return failed(409, str(error))
        except ValueError as error:
            return failed(400, str(error))

    def sessions() -> list[dict[str, Any]]:
        infos = store.sessions()
        return [{**msgspec.to_builtins(i), "phase": phase(load_state(store, i.session_id)).value} for i in infos]

    async def list_sessions(request: Request) -> Response:
        return await guarded(sessions)

    async def one_session(request: Request) -> Response:
        return await guarded(session_view, store, request.path_params["sid"])

    async def head(request: Request) -> Response:
        return await guarded(lambda sid: {"length": store.session(sid).length}, request.path_params["sid"])

    async def record(request: Request) -> Response:
        return await guarded(record_view, store, request.path_params["sid"], request.path_params["seq"])

    async def verify(request: Request) -> Response:
        return await guarded(verify_view, store, request.path_params["sid"])

    async def decision(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict) or not isinstance(body.get("tool_call_id"), str):
            return failed(400, 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}')
        sid, call_id = request.path_params["sid"], body["tool_call_id"]
        approve, reason = bool(body.get("approve")), str(body.get("reason", ""))
        return await guarded(lambda: {"seq": decide(store, sid, call_id, approve=approve, reason=reason)})

    async def fork(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict) or not isinstance(body.get("at"), int):
            return failed(400, 'expected {"at": N}, the last record to copy')
        sid, at = request.path_params["sid"], body["at"]
        return await guarded(lambda: {"session_id": fork_session(store, sid, at).session_id})

    routes = [
        Route("/", page),
        Route("/assets/{name}", page),
        Route("/api/sessions", list_sessions),
        Route("/api/sessions/{sid}", one_session),
        Route("/api/sessions/{sid}/head", head),
        Route("/api/sessions/{sid}/records/{seq:int}", record),
        Route("/api/sessions/{sid}/verify", verify),
        Route("/api/sessions/{sid}/decisions", decision, methods=["POST"]),
        Route("/api/sessions/{sid}/fork", fork, methods=["POST"]),
    ]
    return Starlette(routes=routes)


async def _body(request: Any) -> Any:
    try:
        return msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        return None
