"""The viewer's ASGI app (Starlette): the page, its assets, and a small JSON API over one store.

Needs the ``ui`` extra. Serve it on loopback only (``agent-core ui DB``): it
can write decisions into the log, and it answers only requests addressed to a
loopback name (see ``_checks``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._extras import missing
from .._store import EventStore


def create_app(store: EventStore, *, hosts: Iterable[str] = ()) -> Any:
    """A Starlette app showing the sessions of ``store`` (which stays open; close it after the server stops).

    Routes: ``/`` (the page), ``/api/sessions`` (``?offset=&limit=``, a page
    of the list), ``/api/sessions/{id}`` (a page of records and the state it
    ends in: the newest, ``?after=N`` or ``?before=N``, ``&limit=``; see
    :func:`session_view`), ``.../head``, ``.../records/{seq}`` (``?bytes=``,
    see :func:`record_view`), ``.../tree`` (the tree of sessions the session
    belongs to, from its root: :func:`~effects.session_tree`), ``.../verify``, and ``POST``
    ``.../decisions`` (``{"tool_call_id", "approve", "reason"}``, ``approve`` a
    JSON boolean) and ``.../fork`` (``{"at"}``, a JSON integer). Every request
    must carry a loopback ``Host`` (``127.0.0.0/8``, ``[::1]``, ``localhost``)
    or one of ``hosts`` (the address the app is served on, if another);
    anything else gets ``403``. Every refusal is JSON ``{"error": message}``
    with a 4xx status (``503`` when the store is unavailable). Every answer is
    bounded: at most 200 records and about 1.3 MiB a page, 100 sessions a page
    of the list, 4 MiB for one record's detail.
    """
    try:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.middleware import Middleware
        from starlette.routing import Route

        from ._api import Api, not_routed
        from ._checks import Gate
    except ImportError:
        raise missing("the session viewer", "ui") from None
    api = Api(store, hosts)
    routes = [
        Route("/", api.page),
        Route("/assets/{name}", api.page),
        Route("/api/sessions", api.sessions),
        Route("/api/sessions/{sid}", api.session),
        Route("/api/sessions/{sid}/head", api.head),
        Route("/api/sessions/{sid}/records/{seq:int}", api.record),
        Route("/api/sessions/{sid}/tree", api.tree),
        Route("/api/sessions/{sid}/verify", api.verify),
        Route("/api/sessions/{sid}/decisions", api.decision, methods=["POST"]),
        Route("/api/sessions/{sid}/fork", api.fork, methods=["POST"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(Gate, hosts=hosts)],
        exception_handlers={HTTPException: not_routed},
    )
