"""``agent-core sessions DB``: list the sessions of a store."""

from __future__ import annotations

import argparse
from typing import Any

from ._logs import add_db, command, opened, print_json, show_time, table


def register(subparsers: Any) -> None:
    """Add the ``sessions`` subcommand."""
    parser = subparsers.add_parser(
        "sessions",
        help="list the sessions of a store",
        description="List the sessions of a store: inputs, first and last input times, and the parent of forks.",
    )
    add_db(parser, session=False)
    parser.set_defaults(func=command("sessions", run))


def run(args: argparse.Namespace) -> int:
    """Print the store's sessions, oldest first."""
    with opened(args.db) as store:
        infos = store.sessions()
    if args.json:
        print_json(infos)
        return 0
    if not infos:
        print(f"{args.db}: no sessions")
        return 0
    rows = [
        (
            info.session_id,
            str(info.length),
            show_time(info.first_timestamp),
            show_time(info.last_timestamp),
            f"{info.parent.session_id} at {info.parent.seq}" if info.parent else "",
        )
        for info in infos
    ]
    print(table(("SESSION", "INPUTS", "FIRST INPUT", "LAST INPUT", "FORKED FROM"), rows))
    return 0
