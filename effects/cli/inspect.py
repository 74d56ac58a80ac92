"""``agent-core inspect DB SESSION [--at N]``: the timeline of a session and its state at any record."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agent_core import AgentState, effects_at, phase, state_hash

from .._store import TimelineEntry, load_state, timeline
from .._ui import HTML_RECORDS, MAX_HTML_RECORDS, html_window, write_html
from ._logs import CommandError, add_db, add_progress, command, opened, print_json, progress_printer, show_duration

EPILOG = """\
each input is shown with the phase before and after it, the effects the state
started deriving (start), stopped deriving because this input was their outcome
(done, with how long they ran) or stopped deriving otherwise (cancel), and the
tokens of model answers. Then the state after the last record shown.
"""


def register(subparsers: Any) -> None:
    """Add the ``inspect`` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="show a session's timeline and its state at any record",
        description="Show what each input of a stored session did, and the state after record N.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser)
    parser.add_argument("--at", type=int, metavar="N", help="stop at record N and show the state there (default: end)")
    parser.add_argument("--from", dest="start", type=int, metavar="M", help="show records from M on")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help=f"write the session viewer of records M..N (default: the newest {HTML_RECORDS}, at most "
        f"{MAX_HTML_RECORDS}) as one self-contained HTML file",
    )
    add_progress(parser)
    parser.set_defaults(func=command("inspect", run))


def run(args: argparse.Namespace) -> int:
    """Print the timeline of records M..N and the state after N (or write the HTML viewer)."""
    if args.html:
        return write_page(args)
    with opened(args.db) as store:
        length = store.session(args.session).length
        at = length if args.at is None else args.at
        if not 0 <= at <= length:
            raise CommandError(f"session {args.session!r} has records 1 to {length}; --at {at} is outside them")
        progress = progress_printer(args, f"folding {args.session}")
        start = 1 if args.start is None else args.start
        entries = timeline(store, args.session, start=start, stop=at, progress=progress)
        state = load_state(store, args.session, at)
    if args.json:
        print_json({"session_id": args.session, "at": at, "timeline": entries, "state": _state_json(state)})
        return 0
    shown = f"records {entries[0].seq} to {at}" if entries else "no records"
    print(f"session {args.session}: {length} inputs; showing {shown}")
    origin = entries[0].timestamp if entries else 0
    for entry in entries:
        print(_line(entry, origin))
        for detail in _details(entry):
            print(" " * 8 + detail)
    print()
    print("\n".join(_describe(state, at)))
    return 0


def write_page(args: argparse.Namespace) -> int:
    """``--html FILE``: the viewer's page for records M..N of the session, each record's state inlined."""
    with opened(args.db) as store:
        length = store.session(args.session).length
        try:
            first, last = html_window(length, args.start, args.at)
        except ValueError as error:
            raise CommandError(f"session {args.session!r}: {error}") from None
        try:
            size = write_html(store, args.session, args.html, start=first, stop=last)
        except OSError as error:
            raise CommandError(f"cannot write {args.html}: {error.strerror or error}") from None
    held = f"records {first} to {last} of {length}" if first <= last else "no records"
    print(
        f"wrote the viewer of {args.session} to {args.html} ({held}; {size // 1024} KiB, self-contained)",
        file=sys.stderr,
    )
    if first > 1:
        print(f"  earlier records: --from M --at {first - 1} writes another page", file=sys.stderr)
    return 0


def _line(entry: TimelineEntry, origin: int) -> str:
    phases = (
        entry.phase_before
        if entry.phase_before == entry.phase_after
        else f"{entry.phase_before} -> {entry.phase_after}"
    )
    offset = f"+{(entry.timestamp - origin) / 1000:.3f}s"
    return f"{entry.seq:>6}  {offset:>10}  {entry.type:<24} {phases:<28} {entry.summary}"


def _details(entry: TimelineEntry) -> list[str]:
    lines = []
    if entry.input_tokens or entry.output_tokens:
        lines.append(f"tokens: {entry.input_tokens} in, {entry.output_tokens} out")
    if entry.completed:
        took = f" after {show_duration(entry.duration_ms)}" if entry.duration_ms is not None else ""
        lines.append(f"done {', '.join(entry.completed)}{took}")
    if entry.cancelled:
        lines.append(f"cancel {', '.join(entry.cancelled)}")
    if entry.started:
        lines.append(f"start {', '.join(entry.started)}")
    return lines


def _describe(state: AgentState, at: int) -> list[str]:
    turn, outcome = state.turn, state.last_outcome
    calls = state.tool_calls
    open_calls = 0 if turn is None else len(turn.open_call_ids)
    lines = [f"state after record {at}:", f"  phase: {phase(state).value}"]
    if turn is not None:
        lines[-1] += (
            f" (turn {turn.number}: {turn.model_calls} model calls, {turn.tool_call_count} tool calls, "
            f"{turn.tokens} tokens)"
        )
    lines.append(
        f"  messages: {len(state.messages)}; tool calls: {len(calls)} ({open_calls} open); turns: {state.turns}"
    )
    lines.append(f"  tokens: {state.input_tokens} in, {state.output_tokens} out")
    if outcome is not None:
        reason = f", {outcome.reason}" if outcome.reason else ""
        lines.append(f"  last outcome: {outcome.kind}{reason} (turn {outcome.turn})")
    lines.extend(_workflow_lines(state))
    lines.append(f"  effects that should run: {', '.join(effects_at(state)) or 'none'}")
    lines.append(f"  state hash: {state_hash(state)}")
    return lines


def _workflow_lines(state: AgentState) -> list[str]:
    """The workflow state and every move of the audit (nothing for a session without a workflow)."""
    if state.config.workflow is None:
        return []
    lines = [f"  workflow state: {state.workflow_state}"]
    for move in state.audit:
        guard = f", guard {move.guard}" if move.guard else ""
        lines.append(
            f"    {move.source} -> {move.target} at record {move.step} ({move.trigger} {move.tool_call_id}{guard})"
        )
    return lines


def _state_json(state: AgentState) -> dict[str, Any]:
    return {
        "phase": phase(state).value,
        "step": state.step,
        "turns": state.turns,
        "messages": len(state.messages),
        "tool_calls": len(state.tool_calls),
        "input_tokens": state.input_tokens,
        "output_tokens": state.output_tokens,
        "turn": state.turn,
        "last_outcome": state.last_outcome,
        "effects": list(effects_at(state)),
        "state_hash": state_hash(state),
        "workflow_state": state.workflow_state,
        "audit": tuple(state.audit),
    }
