"""``agent-core sessions DB``: list the sessions of a store."""

from __future__ import annotations

import argparse
from typing import Any

from agent_core import phase

from .._store import EventStore, state_or_why
from ._logs import (
    add_db,
    add_paging,
    as_builtins,
    command,
    next_page,
    no_sessions,
    opened,
    print_json,
    session_page,
    show_time,
    table,
)


def register(subparsers: Any) -> None:
    """Add the ``sessions`` subcommand."""
    parser = subparsers.add_parser(
        "sessions",
        help="list the sessions of a store",
        description="List the sessions of a store: inputs, phase (idle, thinking, acting, awaiting-approval, "
        "retrying), first input, last activity (the time of the last input), and the parent of forks.",
    )
    add_db(parser, session=False)
    add_paging(parser)
    parser.set_defaults(func=command("sessions", run))


def run(args: argparse.Namespace) -> int:
    """Print a page of the store's sessions, oldest first, and how to see the next."""
    with opened(args.db) as store:
        infos, total = session_page(store, args)
        phases = [_phase(store, info.session_id) for info in infos]
    if args.json:
        print_json([{**as_builtins(info), "phase": shown} for info, shown in zip(infos, phases, strict=True)])
        return 0
    if not infos:
        print(no_sessions(args, total))
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
    more = next_page(args, len(infos), total)
    if more is not None:
        print(more)
    return 0


def _phase(store: EventStore, session_id: str) -> str:
    """The session's phase; a session that does not load says why instead of failing the whole list."""
    loaded = state_or_why(store, session_id)
    return loaded if isinstance(loaded, str) else str(phase(loaded).value)
