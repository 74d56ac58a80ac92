"""A scripted provider on a loopback port: test agents against the real SDKs without a network.

:class:`FakeProviderServer` speaks HTTP/1.1 like the OpenAI and Anthropic
APIs do: it records each request (method, path, headers, JSON body) and
answers with the next queued :class:`Reply`, a JSON body with any status and
headers, or a server-sent-event stream written chunk by chunk. A stream may
contain :data:`HOLD`: the server stops there until :meth:`release` or the
client disconnects (cancellation tests), and sets :attr:`held` meanwhile.
"""

from __future__ import annotations

import collections
import json
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

HOLD = "\x00hold"
"""A stream item that pauses the stream until :meth:`FakeProviderServer.release` or a disconnect."""


class RecordedRequest(NamedTuple):
    """A request the server received; ``body`` is the decoded JSON (or the text when it is not JSON), ``raw`` the
    body's bytes as they came."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""


@dataclass(frozen=True)
class Reply:
    """One scripted answer: ``status``, ``headers`` and either a JSON ``body`` or SSE ``events``."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: object = None
    events: tuple[str | bytes, ...] | None = None

    @classmethod
    def stream(cls, events: Iterable[str | bytes], *, headers: Mapping[str, str] | None = None) -> Reply:
        """A 200 ``text/event-stream`` reply; ``events`` are rendered SSE blocks (see :func:`sse`, each sent with
        the blank line that ends it), :data:`HOLD`, or ``bytes`` sent exactly as they are (a body of your own:
        other line ends, a ``content-encoding`` named in ``headers``), each item one chunk."""
        return cls(headers=dict(headers or {}), events=tuple(events))

    @classmethod
    def recorded(cls, text: str) -> Reply:
        """A stream from a recorded SSE transcript (events separated by blank lines), one chunk per event."""
        return cls.stream(block for block in text.strip().split("\n\n") if block.strip())


def sse(data: object, event: str | None = None) -> str:
    """One server-sent event; ``data`` that is not a string is JSON-encoded."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return (f"event: {event}\n" if event else "") + f"data: {payload}"


class _Server(ThreadingHTTPServer):
    """Serves each connection in a thread of its own; a client that goes away is not an error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that resets or drops a kept-alive connection (an SDK abandoning a stream, a killed process) is
        # read as an error by the connection's thread, waiting for the next request: it is the client leaving.
        # Anything else is the server's failure, printed as socketserver does.
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return
        super().handle_error(request, client_address)


class FakeProviderServer:
    """A threaded HTTP server on ``127.0.0.1`` answering with queued replies (use it as a context manager).

    ``default`` answers when the queue is empty: a :class:`Reply`, or a function
    of the :class:`RecordedRequest`. Without one, an unexpected request gets a
    400 whose message says that no reply was queued.
    """

    def __init__(self, *, default: Reply | Callable[[RecordedRequest], Reply] | None = None) -> None:
        self.requests: list[RecordedRequest] = []
        self.held = threading.Event()
        self.disconnected = threading.Event()
        self._release = threading.Event()
        self._queue: collections.deque[Reply] = collections.deque()
        self._default = default
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        # A short poll interval: ``shutdown`` waits for the serving loop to notice.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="fake-provider", daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``; OpenAI clients want ``url + "/v1"`` as their base URL."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeProviderServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release held streams and stop serving."""
        self._release.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._queue.extend(replies)

    def release(self) -> None:
        """Let streams stopped at :data:`HOLD` go on; from now on :data:`HOLD` no longer stops a stream."""
        self._release.set()

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if callable(self._default):
            return self._default(request)
        if self._default is not None:
            return self._default
        message = (
            f"fake provider: no reply queued for {request.method} {request.path} "
            f"(request {len(self.requests)}); queue one with server.enqueue(...)"
        )
        return Reply(status=400, body={"error": {"type": "invalid_request_error", "message": message}})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as real servers set: with Nagle's algorithm a stream of small
    # event writes stalls on the client's delayed ACKs (tens of ms per response).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read requests, not logs
        return

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        raw = data.decode()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake: FakeProviderServer = self.server.fake  # type: ignore[attr-defined]
        reply = fake._next(RecordedRequest(self.command, self.path, headers, body, data))
        try:
            if reply.events is None:
                self._send_body(reply)
            else:
                self._send_stream(reply, fake)
        except (BrokenPipeError, ConnectionResetError):
            fake.disconnected.set()
            self.close_connection = True

    def _send_body(self, reply: Reply) -> None:
        body = reply.body
        data = (body if isinstance(body, str) else json.dumps(body)).encode() if body is not None else b""
        self.send_response(reply.status)
        is_json = body is not None and not isinstance(body, str)
        self.send_header("content-type", "application/json" if is_json else "text/plain")
        self.send_header("content-length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, reply: Reply, fake: FakeProviderServer) -> None:
        self.send_response(reply.status)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for item in reply.events or ():
            if item == HOLD:
                if not self._hold(fake):
                    return
                continue
            data = item if isinstance(item, bytes) else (item + "\n\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _hold(self, fake: FakeProviderServer) -> bool:
        """Wait for a release (True) or for the client to hang up (False)."""
        fake.held.set()
        while not fake._release.wait(0.02):
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                fake.disconnected.set()
                self.close_connection = True
                return False
        return True
