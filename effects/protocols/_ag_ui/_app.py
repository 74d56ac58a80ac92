"""The AG-UI endpoint (Starlette): run a session's turn and stream it, resume a stream, follow a session.

Routes, relative to where the app is mounted:

* ``POST /`` takes an AG-UI ``RunAgentInput`` (what ``HttpAgent`` sends): the
  thread is the session (a new thread starts a session when the app runs an
  agent), new user messages and ``resume`` answers are written to its log,
  and the response streams the events from there (Server-Sent Events) until
  the run ends or waits for a person. With ``Last-Event-ID`` (or
  ``forwardedProps.after``) the stream resumes after that position instead.
  With nothing new and no position, it streams the session from its start.
* ``GET /threads/{thread}/events`` follows a session (``?after=`` or
  ``Last-Event-ID`` to resume; ``?run=run-12`` for one run) until the client
  leaves. It writes nothing.

A refused request gets the AG-UI error shape, ``{"type": "RUN_ERROR",
"message": ..., "code": ...}``, with an HTTP status, and writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import anyio.to_thread
from ag_ui.core import RunAgentInput, RunErrorEvent
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._security import MAX_BODY_BYTES, Authenticate, authenticated, cross_site
from .._sessions import Refused, Sessions
from ._positions import Position, parse_position
from ._replay import runs_started_at
from ._requests import requested_inputs
from ._stream import META, AgUiStream

_RUN_ID = re.compile(r"run-(\d{1,18})(?:-(\d{1,3}))?")


class _Api:
    def __init__(self, sessions: Sessions, authenticate: Authenticate | None, allow_remote: bool) -> None:
        self.sessions = sessions
        self.authenticate = authenticate
        self.allow_remote = allow_remote

    async def run(self, request: Request) -> Response:
        try:
            await self._admit(request, write=True)
            run = await _run_input(request)
            after = _position(request, run)
            session_id = run.thread_id
            stream = AgUiStream(self.sessions, session_id, after=after)
            exists = await _exists(self.sessions, session_id)
            if exists:
                await stream.check()
            elif after is not None or run.resume or not any(m.role == "user" for m in run.messages):
                raise Refused(
                    f"no session {session_id!r}; expected the thread id of a session of this server, or a user "
                    "message to start a new one",
                    code="not-found",
                    status=404,
                )
            written = await self.sessions.submit(
                session_id, lambda state, now: requested_inputs(run, state, now), create=not exists
            )
        except Refused as refusal:
            return _refused(refusal)
        if written.inputs:
            stream.start, stream.until = written.length, written.length + len(written.inputs)
        else:
            stream.until = written.length
        return _sse(stream)

    async def follow(self, request: Request) -> Response:
        try:
            await self._admit(request, write=False)
            session_id = request.path_params["thread"]
            if not await _exists(self.sessions, session_id):
                raise Refused(
                    f"no session {session_id!r}; expected the thread id of a session of this server",
                    code="not-found",
                    status=404,
                )
            after = _position(request, None)
            stream = AgUiStream(self.sessions, session_id, after=after)
            run_id = request.query_params.get("run")
            if run_id is not None:
                stream.start, stream.until = await self._run_start(session_id, run_id)
            await stream.check()
        except Refused as refusal:
            return _refused(refusal)
        return _sse(stream)

    async def _run_start(self, session_id: str, run_id: str) -> tuple[int, int]:
        """Where run ``run_id`` starts (the records before it are skipped): its record, checked to start it."""
        found = _RUN_ID.fullmatch(run_id)
        store = self.sessions.store
        length = (await anyio.to_thread.run_sync(store.session, session_id)).length
        seq = int(found.group(1)) if found else 0
        known = found is not None and 1 <= seq <= length
        if known and run_id in await anyio.to_thread.run_sync(runs_started_at, store, session_id, seq):
            return seq - 1, seq
        raise Refused(
            f"no run {run_id!r} in session {session_id!r}; expected a run id its events carry (run-<record>)",
            code="unknown-run",
            status=404,
        )

    async def _admit(self, request: Request, *, write: bool) -> None:
        refusal = cross_site(request.headers, write=write, allow_remote=self.allow_remote)
        if refusal is not None:
            raise Refused(refusal, code="forbidden", status=403)
        refusal = await authenticated(self.authenticate, request)
        if refusal is not None:
            raise Refused(refusal, code="unauthorized", status=401)


async def _run_input(request: Request) -> RunAgentInput:
    body = await _limited_body(request)
    try:
        return RunAgentInput.model_validate_json(body)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        raise Refused(
            f"expected an AG-UI RunAgentInput (threadId, runId, messages...); at {where}: {first['msg']}",
            code="bad-request",
            status=400,
        ) from None


async def _limited_body(request: Request) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise Refused(
                f"the request body exceeds {MAX_BODY_BYTES:,} bytes; expected a smaller run request",
                code="too-large",
                status=413,
            )
    return bytes(body)


def _position(request: Request, run: RunAgentInput | None) -> Position | None:
    """The client's position: ``Last-Event-ID``, ``?after=``, or ``forwardedProps.after``; ``None`` if none."""
    text = request.headers.get("last-event-id") or request.query_params.get("after")
    if not text and run is not None and isinstance(run.forwarded_props, dict):
        forwarded = run.forwarded_props.get("after")
        text = forwarded if isinstance(forwarded, str) else None
    if not text:
        return None
    try:
        return parse_position(text)
    except ValueError as error:
        raise Refused(str(error), code="bad-position", status=400) from None


async def _exists(sessions: Sessions, session_id: str) -> bool:
    def exists() -> bool:
        try:
            sessions.store.session(session_id)
        except KeyError:
            return False
        return True

    return await anyio.to_thread.run_sync(exists)


def _refused(refusal: Refused) -> Response:
    error = RunErrorEvent(message=refusal.message, code=refusal.code)
    return JSONResponse(error.model_dump(mode="json", by_alias=True), status_code=refusal.status)


def _sse(stream: AgUiStream) -> Response:
    return StreamingResponse(
        _frames(stream),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _frames(stream: AgUiStream) -> AsyncIterator[bytes]:
    try:
        async for position, event in stream.events():
            if event is None:
                yield b": keep-alive\n\n"
                continue
            data = event.model_dump_json(by_alias=True)
            yield f"id: {position}\ndata: {data}\n\n".encode()
    except Refused as refusal:
        yield _error_frame(refusal.message, refusal.code)


def _error_frame(message: str, code: str) -> bytes:
    error = RunErrorEvent(message=message, code=code, metadata={META: {"position": None}})
    return f"data: {error.model_dump_json(by_alias=True)}\n\n".encode()


def build(sessions: Sessions, authenticate: Authenticate | None, allow_remote: bool) -> Starlette:
    """The Starlette app of :func:`effects.protocols.ag_ui_app`."""
    api = _Api(sessions, authenticate, allow_remote)
    routes = [
        Route("/", api.run, methods=["POST"]),
        Route("/threads/{thread}/events", api.follow, methods=["GET"]),
    ]
    return Starlette(routes=routes)
