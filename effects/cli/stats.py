"""``agent-core stats DB [SESSION]``: metrics computed from the log: phases, model calls, tokens, tools, retries."""

from __future__ import annotations

import argparse
from typing import Any

from agent_core import format_nanos

from .._observe import SessionStats, session_stats
from ._logs import (
    add_db,
    add_paging,
    command,
    next_page,
    no_sessions,
    opened,
    print_json,
    session_page,
    show_duration,
    table,
)

EPILOG = """\
everything is computed from the log alone, so it works on any past session.
Without SESSION: one line per session of the store (1,000 at a time: --limit,
--offset). With it: time in each phase, model calls and tokens per turn,
context size at each model call, tool success/failure/timeout counts and
latencies, retries and their backoff, budget exhaustions and stuck detections.
"""


def register(subparsers: Any) -> None:
    """Add the ``stats`` subcommand."""
    parser = subparsers.add_parser(
        "stats",
        help="metrics of one session or of every session of a store, from the log",
        description="Metrics computed purely from stored logs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser, session=False)
    parser.add_argument("session", metavar="SESSION", nargs="?", help="one session (default: every session)")
    add_paging(parser)
    parser.set_defaults(func=command("stats", run))


def run(args: argparse.Namespace) -> int:
    """Print the metrics of SESSION, or a summary line per session of a page of the store's."""
    with opened(args.db) as store:
        if args.session:
            ids, total = [args.session], 1
        else:
            infos, total = session_page(store, args)
            ids = [info.session_id for info in infos]
        all_stats = [session_stats(store, session_id) for session_id in ids]
    if args.json:
        print_json(all_stats[0] if args.session else all_stats)
    elif args.session:
        print("\n".join(describe(all_stats[0])))
    elif not all_stats:
        print(no_sessions(args, total))
    else:
        print(summary(all_stats))
        more = next_page(args, len(all_stats), total)
        if more is not None:
            print(more)
    return 0


def summary(all_stats: list[SessionStats]) -> str:
    """One line per session."""
    rows = [
        (
            s.session_id,
            str(len(s.turns)),
            _outcomes(s),
            str(s.model_calls),
            f"{s.input_tokens}/{s.output_tokens}",
            str(sum(t.calls for t in s.tools)),
            str(sum(t.failed + t.timed_out for t in s.tools)),
            str(s.retries),
            format_nanos(s.cost),
        )
        for s in all_stats
    ]
    headers = (
        "SESSION",
        "TURNS",
        "OUTCOMES",
        "MODEL CALLS",
        "TOKENS IN/OUT",
        "TOOL CALLS",
        "TOOL FAILURES",
        "RETRIES",
        "COST",
    )
    return table(headers, rows)


def describe(s: SessionStats) -> list[str]:
    """The metrics of one session, for people."""
    total = sum(s.phase_ms.values()) or 1
    phases = ", ".join(f"{name} {show_duration(ms)} ({100 * ms // total}%)" for name, ms in s.phase_ms.items() if ms)
    lines = [
        f"session {s.session_id}: {s.records} records, {len(s.turns)} turns ({_outcomes(s) or 'none finished'})",
        f"time by phase: {phases or 'none'}",
        f"model calls: {s.model_calls} ({s.failed_model_calls} failed), tokens {s.input_tokens} in, "
        f"{s.output_tokens} out; latency p50 {s.model_latency.p50_ms} ms, max {s.model_latency.max_ms} ms",
        f"cost: {format_nanos(s.cost)} (priced model calls, in the pricing's currency)",
        f"retries: {s.retries}, waiting {show_duration(s.backoff_ms)} in backoff",
        f"budget exhaustions: {_counts(s.budget_exhaustions)}; stuck detections: {s.stuck}",
        "",
        "turns:",
    ]
    return [*lines, *_turns(s), "", "tools:", *_tools(s)]


def _turns(s: SessionStats) -> list[str]:
    rows = [
        (
            str(t.number),
            t.outcome + (f" ({t.reason})" if t.reason else ""),
            show_duration(t.duration_ms),
            f"{t.model_calls} ({t.failed_model_calls} failed)",
            f"{t.input_tokens}/{t.output_tokens}",
            str(t.tool_calls),
            str(t.retries),
            " -> ".join(map(str, t.context_entries)),
            format_nanos(t.cost),
        )
        for t in s.turns
    ]
    headers = (
        "TURN",
        "OUTCOME",
        "TOOK",
        "MODEL CALLS",
        "TOKENS IN/OUT",
        "TOOL CALLS",
        "RETRIES",
        "CONTEXT ENTRIES",
        "COST",
    )
    return _indented(table(headers, rows))


def _tools(s: SessionStats) -> list[str]:
    tool_rows = [
        (
            t.name,
            str(t.calls),
            str(t.succeeded),
            str(t.failed),
            str(t.timed_out),
            str(t.cancelled),
            f"{t.latency.p50_ms} ms",
            f"{t.latency.p95_ms} ms",
            f"{t.latency.max_ms} ms",
        )
        for t in s.tools
    ]
    tool_headers = ("TOOL", "CALLS", "OK", "FAILED", "TIMED OUT", "CANCELLED", "P50", "P95", "MAX")
    return _indented(table(tool_headers, tool_rows)) if tool_rows else ["  none"]


def _indented(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines()]


def _outcomes(s: SessionStats) -> str:
    return _counts(s.outcomes) if s.outcomes else ""


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "none"
