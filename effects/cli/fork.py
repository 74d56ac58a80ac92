"""``agent-core fork DB SESSION --at N``: a new session starting with the first N inputs of another."""

from __future__ import annotations

import argparse
from typing import Any

from agent_core import phase

from .._store import fork_tree
from ._logs import CommandError, add_db, command, opened, print_json

EPILOG = """\
the new session shares the first N records (and their hashes) with SESSION and
records where it came from; SESSION is not changed. Rolling a session back to
step N is a fork: continue the new session instead (e.g. agent-core run --db DB
--session NEW_ID).

child sessions (agents used as tools) that SESSION's calls had started by
record N are forked with it, down the tree, as they stood then: a child whose
call had its answer whole, a running one up to its last record stamped at or
before record N. Each is named NEW_ID:<tool call id>, its lineage naming the
new tree.
"""


def register(subparsers: Any) -> None:
    """Add the ``fork`` subcommand."""
    parser = subparsers.add_parser(
        "fork",
        help="start a new session from the first N inputs of another (rollback)",
        description="Fork a new session from a prefix of a stored session.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser)
    parser.add_argument("--at", type=int, required=True, metavar="N", help="copy records 1 to N")
    parser.add_argument("--as", dest="new_id", metavar="NEW_ID", help="the new session's id (default SESSION@N)")
    parser.set_defaults(func=command("fork", run))


def run(args: argparse.Namespace) -> int:
    """Fork, print the new session's id."""
    with opened(args.db, readonly=False) as store:
        length = store.session(args.session).length
        if not 1 <= args.at <= length:
            raise CommandError(f"session {args.session!r} has records 1 to {length}; --at {args.at} is outside them")
        journal, children = fork_tree(store, args.session, args.at, new_id=args.new_id)
    if args.json:
        print_json(
            {
                "session_id": journal.session_id,
                "parent": args.session,
                "at": args.at,
                "inputs": journal.seq,
                "children": [
                    {"session_id": c.session_id, "parent": c.source.session_id, "at": c.source.seq} for c in children
                ],
            }
        )
        return 0
    print(f"forked {journal.session_id} from {args.session} at record {args.at}")
    print(f"phase there: {phase(journal.state).value}; inputs: {journal.seq}")
    for child in children:
        print(f"forked child {child.session_id} from {child.source.session_id} at record {child.source.seq}")
    return 0
