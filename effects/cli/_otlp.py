"""``agent-core export DB SESSION --otlp URL``: a stored session's GenAI spans, sent to an OTLP/HTTP collector."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._extras import install_command
from .._observe import Conventions, export_spans, session_spans
from .._store import DEFAULT_TREE_LIMIT, SessionNode, session_tree
from ._logs import CommandError, opened, print_json


def add_otlp_options(parser: argparse.ArgumentParser) -> None:
    """``--otlp URL`` and what the spans say about the model (the log does not record it)."""
    parser.add_argument(
        "--otlp",
        metavar="URL",
        help="send the session's OpenTelemetry GenAI spans to this OTLP/HTTP traces endpoint "
        "(e.g. http://127.0.0.1:4318/v1/traces) instead of writing the log",
    )
    parser.add_argument("--model", default="", help="with --otlp: the model the session used (gen_ai.request.model)")
    parser.add_argument(
        "--provider", default="agent-core", help="with --otlp: the model's provider (gen_ai.provider.name)"
    )
    parser.add_argument("--agent-name", default="agent-core", help="with --otlp: gen_ai.agent.name")
    parser.add_argument(
        "--tree",
        action="store_true",
        help="with --otlp: the spans of the child sessions under SESSION too, nested in one trace "
        f"(at most {DEFAULT_TREE_LIMIT} sessions below it)",
    )


def run_otlp(args: argparse.Namespace) -> int:
    """Fold the session into spans (marked replayed) and export them in one batch."""
    exporter = _exporter(args.otlp)
    conventions = Conventions.from_environment(agent_name=args.agent_name, provider=args.provider, model=args.model)
    if args.tree and args.until is not None:
        raise CommandError("--tree exports whole sessions; expected --tree or --until N, got both")
    with opened(args.db) as store:
        spans = session_spans(store, args.session, conventions, until=args.until)
        if args.tree:
            below = _below(session_tree(store, args.session))
            spans.extend(span for session_id in below for span in session_spans(store, session_id, conventions))
    try:
        count = export_spans(spans, exporter)
    except RuntimeError as error:
        raise CommandError(f"{args.otlp}: {error}") from None
    finally:
        exporter.shutdown()
    if args.json:
        print_json({"session_id": args.session, "spans": count, "endpoint": args.otlp})
    else:
        which = f"{args.session} and the sessions under it" if args.tree else args.session
        print(f"sent {count} spans of {which} to {args.otlp}", file=sys.stderr)
    return 0


def _below(node: SessionNode) -> list[str]:
    """The ids of the sessions under ``node``, parents before their children."""
    return [found for child in node.children for found in (child.session_id, *_below(child))]


def _exporter(endpoint: str) -> Any:
    if not endpoint.startswith(("http://", "https://")):
        raise CommandError(f"--otlp expects an http(s) URL of an OTLP/HTTP traces endpoint, got {endpoint!r}")
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise CommandError(
            f"--otlp needs the OpenTelemetry exporter, from the 'otel' extra, which is not installed; "
            f"install it with: {install_command('otel')}"
        ) from None
    return OTLPSpanExporter(endpoint=endpoint, timeout=10)
