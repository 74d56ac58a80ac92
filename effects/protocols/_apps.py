"""The protocol apps, built on demand: each imports its SDK (an optional extra) only when it is built."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from effects import EventStore

from .._extras import missing
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
        from ._ag_ui import build
    except ImportError as error:
        raise missing("ag_ui_app", "ag-ui", error) from None
    return build(sessions, authenticate, allow_remote)


def ag_ui_events(store: EventStore, session_id: str) -> list[dict[str, Any]]:
    """Every AG-UI event of a stored session, as the JSON objects a stream sends (each with its position).

    The same events a live stream sent, computed from the log alone (text the
    model streamed arrives whole with its completed message).
    """
    try:
        from ._ag_ui import replayed
    except ImportError as error:
        raise missing("ag_ui_events", "ag-ui", error) from None
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
        from ._mcp import build
    except ImportError as error:
        raise missing("mcp_server", "mcp", error) from None
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
        from ._mcp import build_app
    except ImportError as error:
        raise missing("mcp_app", "mcp", error) from None
    return build_app(host, authenticate, allow_remote, wait_seconds)


def a2a_app(
    host: SessionHost,
    *,
    url: str,
    name: str = "agent-core agent",
    description: str = "An agent: send it a message; it answers, and asks before tools that need approval.",
    skills: Sequence[Any] = (),
    version: str = "1.0.0",
    authenticate: Authenticate | None = None,
    allow_remote: bool = False,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> Any:
    """``host``'s agent as an A2A 1.0 server (the ``a2a-sdk`` package): an ASGI app.

    ``/.well-known/agent-card.json`` is the card (its interface at ``url``, where
    the app is served); ``POST /`` is the JSON-RPC endpoint (1.0's
    ``SendMessage``, ``SendStreamingMessage``, ``GetTask``, ``ListTasks``,
    ``CancelTask``, ``SubscribeToTask``, and 0.3's ``message/send`` and
    ``message/stream``). A ``contextId`` is a session, a task is one of its
    turns (``<contextId>:<turn>``): ``working``, ``input-required`` while a tool
    call waits for a person (answer with a message to the task whose data part
    is ``{"tool_call_id", "approved", "reason"}`` or ``{"tool_call_id",
    "answers"}``), ``completed`` with the answer as an artifact, ``canceled``,
    or ``failed`` with the reason; its history is read from the log. A call
    that starts work waits at most ``wait_seconds`` for the turn. Requests to a
    non-loopback host and cross-origin writes are refused unless
    ``allow_remote``; ``authenticate`` is given each request. ``skills`` are
    ``a2a.types.a2a_pb2.AgentSkill`` messages for the card. Needs the ``a2a`` extra.
    """
    try:
        from ._a2a import build_app
    except ImportError as error:
        raise missing("a2a_app", "a2a", error) from None
    return build_app(
        host,
        url=url,
        name=name,
        description=description,
        skills=skills,
        version=version,
        authenticate=authenticate,
        allow_remote=allow_remote,
        wait_seconds=wait_seconds,
    )


def remote_agent(
    url: str,
    *,
    name: str,
    description: str = "",
    requires_approval: bool = False,
    timeout_ms: int | None = None,
    poll_seconds: float = 0.5,
    headers: dict[str, str] | None = None,
) -> Any:
    """A remote A2A agent at ``url`` as a tool named ``name`` (its one argument: ``message``).

    Use it as an async context manager and give it to an agent like a ``@tool``
    function. A call sends the message and follows the remote task: its id is
    logged before the call waits for it, so a session resumed after a crash
    polls that task and never sends the message again; a task that asks for
    input waits for a person (``Session.answer(call_id, {"reply": ...})``) and
    gets the answer. ``timeout_ms`` bounds each attempt (the toolbox's default
    otherwise); ``headers`` go with every request (credentials). Needs the
    ``a2a`` extra.
    """
    try:
        from ._a2a import RemoteAgent
    except ImportError as error:
        raise missing("remote_agent", "a2a", error) from None
    return RemoteAgent(
        url,
        name=name,
        description=description,
        requires_approval=requires_approval,
        timeout_ms=timeout_ms,
        poll_seconds=poll_seconds,
        headers=headers,
    )
