"""``agent-core sessions DB``: list the sessions of a store."""

from __future__ import annotations

import argparse
from typing import Any

from agent_core import phase

from .._store import EventStore, sessions_page, state_or_why
from ._logs import CommandError, add_db, as_builtins, command, opened, print_json, show_time, table


def register(subparsers: Any) -> None:
    """Add the ``sessions`` subcommand."""
    parser = subparsers.add_parser(
        "sessions",
        help="list the sessions of a store",
        description="List the sessions of a store: inputs, phase (idle, thinking, acting, awaiting-approval, "
        "retrying), first input, last activity (the time of the last input), and the parent of forks.",
    )
    add_db(parser, session=False)
    parser.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"list at most N sessions (default {DEFAULT_LIMIT:,}): each one's log is read for its phase",
    )
    parser.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N oldest sessions (default 0)")
    parser.set_defaults(func=command("sessions", run))


DEFAULT_LIMIT = 1_000
"""How many sessions ``agent-core sessions`` lists unless told otherwise."""


def run(args: argparse.Namespace) -> int:
    """Print a page of the store's sessions, oldest first, and how to see the next."""
    if args.limit < 0 or args.offset < 0:
        raise CommandError(
            f"expected --limit and --offset of 0 or more, got --limit {args.limit} --offset {args.offset}"
        )
    with opened(args.db) as store:
        infos, total = sessions_page(store, offset=args.offset, limit=args.limit)
        phases = [_phase(store, info.session_id) for info in infos]
    if args.json:
        print_json([{**as_builtins(info), "phase": shown} for info, shown in zip(infos, phases, strict=True)])
        return 0
    if not infos:
        print(f"{args.db}: no sessions" + (f" past the first {total:,}" if total else ""))
        return 0
    rows = [
        (
            info.session_id,
            str(info.length),
            shown,
            show_time(info.first_timestamp),
            show_time(info.last_timestamp),
            f"{info.parent.session_id} at {info.parent.seq}" if info.parent else "",
        )
        for info, shown in zip(infos, phases, strict=True)
    ]
    print(table(("SESSION", "INPUTS", "PHASE", "FIRST INPUT", "LAST ACTIVITY", "FORKED FROM"), rows))
    shown = args.offset + len(infos)
    if shown < total:
        print(f"… sessions {args.offset + 1:,} to {shown:,} of {total:,}; the next with --offset {shown}")
    return 0


def _phase(store: EventStore, session_id: str) -> str:
    """The session's phase; a session that does not load says why instead of failing the whole list."""
    loaded = state_or_why(store, session_id)
    return loaded if isinstance(loaded, str) else str(phase(loaded).value)
