"""``agent-core ui DB``: the session viewer in the browser, served on loopback."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import socket
import sys
from typing import Any

from .._extras import MissingExtra, install_command
from .._store import EventStore, open_store
from .._ui import create_app
from ..protocols import StoredSessions, ag_ui_app
from ._logs import STORE_HELP, CommandError, add_dsn, command, opened

EPILOG = """\
open the printed address in a browser: the sessions of the store, and for each
a timeline with one lane per effect, the state and its diff at any record, the
model's context at any model call, replay --verify, fork here, and Approve /
Deny buttons for tool calls waiting for a person (they write the decision into
the log; a session running under follow_store continues). The page
follows a live session as records arrive. It is served on loopback only.
With the ag-ui extra, the same server speaks AG-UI at /ag-ui (POST a
RunAgentInput; GET /ag-ui/threads/SESSION/events follows a session): messages
and answers sent there are appended for the worker that runs the session.
"""


def register(subparsers: Any) -> None:
    """Add the ``ui`` subcommand."""
    parser = subparsers.add_parser(
        "ui",
        help="browse the sessions of a store in a local web page",
        description="Serve the session viewer for a store on a loopback address.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("db", metavar="DB", nargs="?", help=STORE_HELP)
    add_dsn(parser, after="")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="the port (default: 8765; 0 picks a free one)")
    parser.set_defaults(func=command("ui", run))


def mount_ag_ui(app: Any, store: EventStore) -> None:
    """Serve the store's sessions over AG-UI at ``/ag-ui`` beside the viewer (when the ``ag-ui`` extra is there):
    messages and answers sent there are appended for the worker that runs the session."""
    try:
        endpoint = ag_ui_app(StoredSessions(store))
    except MissingExtra:
        print("agent-core ui: no AG-UI endpoint (pip install 'agent-core[ag-ui]' adds it at /ag-ui)", file=sys.stderr)
        return
    app.mount("/ag-ui", endpoint)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback:
        raise CommandError(
            f"--host must be a loopback address (127.0.0.1, ::1, localhost), got {args.host!r}: "
            "the viewer can write decisions into the log and has no login"
        )
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port expects a port number from 0 to 65535 (0 picks a free one), got {args.port}")
    try:
        import uvicorn
    except ImportError:
        raise CommandError(
            f"the viewer needs the 'ui' extra (Starlette and uvicorn), which is not installed; "
            f"install it with: {install_command('ui')}"
        ) from None
    with opened(args.db):  # a missing file or another kind of file is refused before anything is created
        pass
    with listening(args.host, args.port) as sock:
        store = open_store(args.db, readonly=False)
        try:
            app = create_app(store, hosts=[args.host])
            mount_ag_ui(app, store)
            port = sock.getsockname()[1]
            where = f"[{args.host}]" if ":" in args.host else args.host
            print(f"agent-core ui: serving {args.db} on http://{where}:{port}/ (Ctrl-C stops)", file=sys.stderr)
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
            server.run(sockets=[sock])
        finally:
            store.close()
    return 0


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (as uvicorn would bind it), or a one-line error: a busy port is said
    before anything claims to serve."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise CommandError(
                f"port {port} on {host} is in use (another viewer or program listens there); "
                "choose another with --port N, or --port 0 for a free one"
            ) from None
        raise CommandError(f"cannot listen on {host}:{port} ({error.strerror or error})") from None
    sock.listen()  # from here connections wait in the backlog until the server takes them
    return sock
