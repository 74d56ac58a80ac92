"""The viewer's ASGI app (Starlette): the page, its assets, and a small JSON API over one store.

Needs the ``ui`` extra (``pip install 'agent-core[ui]'``). Serve it on
loopback only (``agent-core ui DB``): it can write decisions into the log.
"""

from __future__ import annotations

from typing import Any

from .._store import EventStore


def create_app(store: EventStore) -> Any:
    """A Starlette app showing the sessions of ``store`` (which stays open; close it after the server stops).

    Routes: ``/`` (the page), ``/api/sessions``, ``/api/sessions/{id}`` (the
    view), ``.../head``, ``.../records/{seq}``, ``.../verify``, and ``POST``
    ``.../decisions`` (``{"tool_call_id", "approve", "reason"}``) and ``.../fork`` (``{"at"}``).
    """
    try:
        from starlette.applications import Starlette
        from starlette.routing import Route

        from ._api import Api
    except ImportError:
        raise ImportError("the session viewer needs Starlette and uvicorn: pip install 'agent-core[ui]'") from None
    api = Api(store)
    routes = [
        Route("/", api.page),
        Route("/assets/{name}", api.page),
        Route("/api/sessions", api.sessions),
        Route("/api/sessions/{sid}", api.session),
        Route("/api/sessions/{sid}/head", api.head),
        Route("/api/sessions/{sid}/records/{seq:int}", api.record),
        Route("/api/sessions/{sid}/verify", api.verify),
        Route("/api/sessions/{sid}/decisions", api.decision, methods=["POST"]),
        Route("/api/sessions/{sid}/fork", api.fork, methods=["POST"]),
    ]
    return Starlette(routes=routes)
