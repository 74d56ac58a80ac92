"""``agent-core ui DB``: the session viewer in the browser, served on loopback."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import Any

from .._store import open_store
from .._ui import create_app
from ._logs import STORE_HELP, CommandError, add_dsn, command, opened

EPILOG = """\
open the printed address in a browser: the sessions of the store, and for each
a timeline with one lane per effect, the state and its diff at any record, the
model's context at any model call, replay --verify, fork here, and Approve /
Deny buttons for tool calls waiting for a person (they write the decision into
the log; a session running under follow_store continues). The page
follows a live session as records arrive. It is served on loopback only.
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
    try:
        import uvicorn
    except ImportError:
        raise CommandError("the viewer needs uvicorn and Starlette: pip install 'agent-core[ui]'") from None
    with opened(args.db):  # a missing file or another kind of file is refused before anything is created
        pass
    store = open_store(args.db, readonly=False)
    try:
        app = create_app(store)
        print(f"agent-core ui: serving {args.db} on http://{args.host}:{args.port}/ (Ctrl-C stops)", file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        store.close()
    return 0
