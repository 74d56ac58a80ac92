"""A real OTLP/HTTP trace receiver on a loopback port, for tests of span exports."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class Receiver(BaseHTTPRequestHandler):
    """Accepts OTLP/HTTP protobuf trace exports and keeps the decoded requests on the server."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, request))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def serving() -> Iterator[HTTPServer]:
    """A receiver serving on ``127.0.0.1`` (its port: ``server_port``); ``requests`` holds (path, request) pairs."""
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
