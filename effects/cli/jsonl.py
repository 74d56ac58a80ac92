"""``agent-core export`` and ``agent-core import``: one session as JSON lines, the portable log format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agent_core import SCHEMA_VERSION

from .._store import export_session, import_session, parse_log
from ._logs import STORE_HELP, CommandError, add_db, add_dsn, command, opened, print_json
from ._otlp import add_otlp_options, run_otlp

FORMAT = "JSON lines: one input per line, the first one session-started (its schema: agent_core.input_json_schema())"


def register(subparsers: Any) -> None:
    """Add the ``export`` and ``import`` subcommands."""
    export = subparsers.add_parser(
        "export",
        help="write a session as JSON lines",
        description=f"Write a stored session's inputs as {FORMAT}. Records of older schemas are upcast.",
    )
    add_db(export)
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE (default: stdout)")
    export.add_argument("--until", type=int, metavar="N", help="export records 1 to N only")
    add_otlp_options(export)
    export.set_defaults(func=command("export", run_export))

    imported = subparsers.add_parser(
        "import",
        help="store a JSON-lines log as a new session",
        description=f"Store a log ({FORMAT}) as a new session; the file is checked completely before anything "
        "is written. Creates DB if it does not exist.",
    )
    imported.add_argument("db", metavar="DB", nargs="?", help=f"{STORE_HELP}; created if missing")
    imported.add_argument("file", metavar="FILE", nargs="?", help="the JSON-lines log ('-' for stdin)")
    add_dsn(imported, after="file")
    imported.add_argument("--as", dest="session_id", metavar="ID", help="the session's id (default: from the log)")
    imported.add_argument("--json", action="store_true", help="print JSON for programs instead of text for people")
    imported.set_defaults(func=command("import", run_import))


def run_export(args: argparse.Namespace) -> int:
    """Write the session as JSON lines to ``-o`` or stdout (or its spans to ``--otlp``)."""
    if args.otlp:
        return run_otlp(args)
    with opened(args.db) as store:
        data = export_session(store, args.session, until=args.until)
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        args.output.write_bytes(data)
        lines = data.count(b"\n")
        print(f"wrote {lines} inputs of {args.session} to {args.output}", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Check the file, then store it as one new session."""
    source = "stdin" if args.file == "-" else args.file
    try:
        data = sys.stdin.buffer.read() if source == "stdin" else Path(args.file).read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {source}: {error.strerror}") from None
    parsed = parse_log(data, source=source)  # before the store is opened: a bad file creates nothing
    with opened(args.db, readonly=False, create=True) as store:
        info = import_session(store, parsed, session_id=args.session_id)
    if args.json:
        print_json({"session_id": info.session_id, "inputs": info.length, "schema_version": parsed.schema_version})
        return 0
    version = (
        ""
        if parsed.schema_version == SCHEMA_VERSION
        else f" (schema version {parsed.schema_version}, upcast when read)"
    )
    print(f"imported {info.length} inputs from {source} as session {info.session_id}{version}")
    return 0
