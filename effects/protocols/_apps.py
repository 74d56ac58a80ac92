"""The protocol apps, built on demand: each imports its SDK (an optional extra) only when it is built."""

from __future__ import annotations

from typing import Any

from effects import EventStore
from effects.providers import MissingExtra

from ._host import SessionHost
from ._security import Authenticate
from ._sessions import Sessions

DEFAULT_WAIT_SECONDS = 60.0
"""How long an MCP tool call that starts work waits for the turn to end or to wait for a person."""


def ag_ui_app(sessions: Sessions, *, authenticate: Authenticate | None = None, allow_remote: bool = False) -> Any:
    """The AG-UI endpoint over ``sessions`` (a :class:`SessionHost` or :class:`StoredSessions`): a Starlette app.

    ``POST /`` runs a turn from an AG-UI ``RunAgentInput`` (the thread is the
    session; new user messages and ``resume`` answers are logged) and streams
    its events as Server-Sent Events until the run ends or waits for a person;
    ``GET /threads/{thread}/events`` follows a session. Every event carries its
    position (the SSE ``id`` and ``metadata["agent-core"]["position"]``); a
    client that comes back with the last one it saw (``Last-Event-ID``,
    ``?after=`` or ``forwardedProps.after``) gets exactly the events after it.
    A tool call waiting for a person ends the run with an interrupt (its id is
    the call's); the answer comes back as a ``resume`` entry. Mount it in your
    own app (``Mount("/ag-ui", app=ag_ui_app(host))``) or serve it alone; it
    refuses cross-origin writes, and requests to a non-loopback host unless
    ``allow_remote``; ``authenticate`` is given each request (true lets it in).
    Needs the ``ag-ui`` extra.
    """
    try:
        from ._ag_ui._app import build
    except ImportError as error:
        raise _missing("ag_ui_app", "ag-ui", error) from None
    return build(sessions, authenticate, allow_remote)


def ag_ui_events(store: EventStore, session_id: str) -> list[dict[str, Any]]:
    """Every AG-UI event of a stored session, as the JSON objects a stream sends (each with its position).

    The same events a live stream sent, computed from the log alone (text the
    model streamed arrives whole with its completed message).
    """
    try:
        from ._ag_ui._replay import replayed
    except ImportError as error:
        raise _missing("ag_ui_events", "ag-ui", error) from None
    return replayed(store, session_id)


def mcp_server(host: SessionHost, *, name: str = "agent-core", wait_seconds: float = DEFAULT_WAIT_SECONDS) -> Any:
    """``host``'s sessions as MCP tools: an ``MCPServer`` of the official SDK (run it over stdio with
    ``await server.run_stdio_async()``, or see :func:`mcp_app` for HTTP).

    Tools: ``start_session(message)``, ``send_message(session_id, message)``,
    ``read_answer(session_id)``, ``approve(session_id, tool_call_id, approved, reason)``,
    ``answer_questions(session_id, tool_call_id, answers)`` and ``cancel_turn(session_id)``.
    Each that starts work waits for the turn to end or to wait for a person (at
    most ``wait_seconds``) and returns the session's status, its latest answer
    and what waits for a decision. Needs the ``mcp`` extra.
    """
    try:
        from ._mcp._server import build
    except ImportError as error:
        raise _missing("mcp_server", "mcp", error) from None
    return build(host, name=name, wait_seconds=wait_seconds)


def mcp_app(
    host: SessionHost,
    *,
    authenticate: Authenticate | None = None,
    allow_remote: bool = False,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> Any:
    """:func:`mcp_server` over streamable HTTP, as an ASGI app serving ``/mcp``.

    The SDK's app refuses requests whose Host or Origin is not loopback (unless
    ``allow_remote``); ``authenticate`` is given each request (true lets it in;
    else 401 with a JSON-RPC error).
    """
    try:
        from ._mcp._http import build_app
    except ImportError as error:
        raise _missing("mcp_app", "mcp", error) from None
    return build_app(host, authenticate, allow_remote, wait_seconds)


def _missing(user: str, extra: str, error: ImportError) -> MissingExtra:
    return MissingExtra(
        f"{user} needs a package that is not installed (import failed: {error}). "
        f"Install the extra: pip install 'agent-core[{extra}]'"
    )
