"""The viewer's HTTP handlers (Starlette). Imported only when an app is created: Starlette is an optional extra."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import anyio.to_thread
import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .._store import (
    ConcurrencyError,
    EventStore,
    SessionExists,
    SessionNotFound,
    StoreUnavailable,
    fork_session,
)
from ._assets import ASSETS, asset, media_type
from ._bounds import DETAIL_BYTES, RECORDS_PER_PAGE, SESSIONS_PER_PAGE
from ._checks import BadRequest, cross_site, failed, json_body, number, param
from ._cursor import Cursors
from ._decide import DecisionRefused, decide
from ._records import record_detail
from ._sessions import UNREADABLE, SessionList, tree_of
from ._verify import verify_view
from ._view import Views

DECISION = 'expected {"tool_call_id": "...", "approve": true|false, "reason": "..."}'
FORK = 'expected {"at": N}, the last record to copy'

T = TypeVar("T")


class Decision(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST .../decisions``: only a JSON boolean approves or denies."""

    tool_call_id: str
    approve: bool
    reason: str = ""


class Fork(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST .../fork``: a JSON integer, never ``true``."""

    at: int


class Api:
    """One method per route, over one store. Work on the store runs in a worker thread; the folds a page
    leaves are kept for the next (see ``_cursor``)."""

    def __init__(self, store: EventStore, hosts: Iterable[str] = ()) -> None:
        self.store = store
        self.hosts = frozenset(hosts)
        self.cursors = Cursors()
        self.views = Views(store, self.cursors)
        self.listing = SessionList(store, self.cursors)

    async def page(self, request: Request) -> Response:
        name = param(request, "name") if "name" in request.path_params else "index.html"
        if name not in ASSETS:
            return failed(404, f"no asset {name!r}; the page has {', '.join(ASSETS)}")
        return Response(asset(name), media_type=media_type(name))

    async def sessions(self, request: Request) -> Response:
        try:
            offset = number(request, "offset", 0)
            limit = number(request, "limit", SESSIONS_PER_PAGE)
        except BadRequest as error:
            return failed(error.status, str(error))
        return await _guarded(lambda: self.listing.page(offset, limit))

    async def session(self, request: Request) -> Response:
        sid = param(request, "sid")
        try:
            after = number(request, "after", None)
            before = number(request, "before", None)
            limit = number(request, "limit", RECORDS_PER_PAGE)
        except BadRequest as error:
            return failed(error.status, str(error))
        return await _guarded(lambda: self.views.page(sid, after=after, before=before, limit=limit))

    async def head(self, request: Request) -> Response:
        sid = param(request, "sid")
        return await _guarded(lambda: {"length": self.store.session(sid).length})

    async def record(self, request: Request) -> Response:
        sid, seq = param(request, "sid"), request.path_params["seq"]
        try:
            budget = number(request, "bytes", DETAIL_BYTES)
        except BadRequest as error:
            return failed(error.status, str(error))
        return await _guarded(lambda: record_detail(self.store, sid, seq, budget, self.cursors))

    async def tree(self, request: Request) -> Response:
        sid = param(request, "sid")
        return await _guarded(lambda: tree_of(self.store, sid))

    async def verify(self, request: Request) -> Response:
        sid = param(request, "sid")
        return await _guarded(lambda: verify_view(self.store, sid))

    async def decision(self, request: Request) -> Response:
        try:
            body = await self._body(request, Decision, DECISION)
        except BadRequest as error:
            return failed(error.status, str(error))
        sid = param(request, "sid")
        return await _guarded(
            lambda: {"seq": decide(self.store, sid, body.tool_call_id, approve=body.approve, reason=body.reason)}
        )

    async def fork(self, request: Request) -> Response:
        try:
            body = await self._body(request, Fork, FORK)
        except BadRequest as error:
            return failed(error.status, str(error))
        sid = param(request, "sid")
        return await _guarded(lambda: {"session_id": fork_session(self.store, sid, body.at).session_id})

    async def _body(self, request: Request, shape: type[T], expected: str) -> T:
        if (refused := cross_site(request, self.hosts)) is not None:
            raise BadRequest(403, refused)
        return await json_body(request, shape, expected)


async def not_routed(request: Request, error: Exception) -> Response:
    """A path or method the viewer does not serve, as JSON like every other error."""
    assert isinstance(error, HTTPException)
    routes = "/, /assets/NAME, /api/sessions[/ID[/head|/records/N|/tree|/verify|/decisions|/fork]]"
    return failed(error.status_code, f"{error.detail}: {request.method} {request.url.path}; the viewer serves {routes}")


async def _guarded(work: Callable[[], Any]) -> Response:
    """Run ``work`` in a thread; errors a person can cause become JSON ``{"error": ...}`` with a status."""
    try:
        data = await anyio.to_thread.run_sync(work)
    except SessionNotFound as error:
        return failed(404, str(error))
    except (DecisionRefused, ConcurrencyError, SessionExists) as error:
        return failed(409, str(error))
    except UNREADABLE as error:
        return failed(422, str(error))
    except StoreUnavailable as error:
        return failed(503, str(error))
    except ValueError as error:
        return failed(400, str(error))
    return Response(msgspec.json.encode(data), media_type="application/json")
