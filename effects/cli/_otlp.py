"""``agent-core export DB SESSION --otlp URL``: a stored session's GenAI spans, sent to an OTLP/HTTP collector."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._extras import install_command
from .._observe import Conventions, export_spans, session_spans
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


def run_otlp(args: argparse.Namespace) -> int:
    """Fold the session into spans (marked replayed) and export them in one batch."""
    exporter = _exporter(args.otlp)
    conventions = Conventions.from_environment(agent_name=args.agent_name, provider=args.provider, model=args.model)
    with opened(args.db) as store:
        spans = session_spans(store, args.session, conventions, until=args.until)
    try:
        count = export_spans(spans, exporter)
    except RuntimeError as error:
        raise CommandError(f"{args.otlp}: {error}") from None
    finally:
        exporter.shutdown()
    if args.json:
        print_json({"session_id": args.session, "spans": count, "endpoint": args.otlp})
    else:
        print(f"sent {count} spans of {args.session} to {args.otlp}", file=sys.stderr)
    return 0


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
