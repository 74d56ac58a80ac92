"""The scripted provider server as a test's client sees it: a client that goes away is no error of the server's."""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from effects.testing import FakeProviderServer, Reply


def test_a_client_that_resets_its_kept_alive_connection_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    # An HTTP client keeps the connection open for its next request, then drops it with a reset (an SDK abandoning
    # a stream, a process killed): the server's thread, waiting for that next request, reads a reset. That is the
    # client's leaving, not the server failing, and it used to print a traceback into the test's output.
    with FakeProviderServer(default=Reply(body={"ok": True})) as server:
        earlier = set(threading.enumerate())  # other tests' servers may have threads of their own still waiting
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as client:
            client.sendall(b"GET /v1/models HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n")
            answer = b""
            while b'{"ok": true}' not in answer and b'{"ok":true}' not in answer:
                chunk = client.recv(4096)
                assert chunk, f"the server closed the connection before answering: {answer!r}"
                answer += chunk
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        for handler in set(threading.enumerate()) - earlier:  # the connection's thread reads the reset, then ends
            if "process_request_thread" in handler.name:
                handler.join(timeout=30)
                assert not handler.is_alive(), "the server's thread for the reset connection did not end"
        assert len(server.requests) == 1
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Exception occurred" not in captured.err, captured.err
