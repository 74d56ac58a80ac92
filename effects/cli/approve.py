"""``agent-core approve DB SESSION CALL``: decide on a tool call waiting for approval in a stored session or below it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agent_core import pending_approvals

from .._store import ConcurrencyError, load_state
from .._ui import DecisionRefused, decide
from ._logs import CommandError, add_db, command, opened, print_json

REFUSED = 1
"""Exit code when the session refused the decision (the reason is printed)."""

DESCRIPTION = """\
Approve (or, with --deny, deny) a tool call that waits for a person in a stored
session, or in one of its child sessions at any depth: the decision is appended
to SESSION's log, which the session picks up when it runs or resumes. Without
CALL, lists what waits: each call's address, the path of sessions down to it,
its tool and arguments. A call of a child session is named by its address,
<child session id>/<tool call id>."""

EPILOG = """\
examples:
  agent-core approve team.db plan                           # what waits, in plan and its children
  agent-core approve team.db plan plan:ask-cats/write-1     # a child's call, decided at the root
  agent-core approve team.db plan call-3 --deny --reason "not on a Friday"

exit codes: 0 appended (or listed), 1 the session refused the decision (already
decided, no such call), 2 a bad argument, a missing store or session.
"""


def register(subparsers: Any) -> None:
    """Add the ``approve`` subcommand."""
    parser = subparsers.add_parser(
        "approve",
        help="approve or deny a tool call waiting in a stored session or its children",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser)
    parser.add_argument("call", metavar="CALL", nargs="?", help="the call's id, or a child's call's address")
    parser.add_argument("--deny", action="store_true", help="deny the call instead (the model reads --reason)")
    parser.add_argument("--reason", default="", help="why (with --deny)")
    parser.set_defaults(func=command("approve", run))


def run(args: argparse.Namespace) -> int:
    """List the waiting calls, or append the decision; returns the exit code."""
    if args.session is None:
        raise CommandError("expected SESSION (see `agent-core sessions DB`)")
    if args.reason and not args.deny:
        raise CommandError("--reason goes with --deny (an approval has no reason)")
    if args.call is None:
        with opened(args.db) as store:
            waiting = pending_approvals(load_state(store, args.session))
        if args.json:
            print_json(list(waiting))
        elif not waiting:
            print(f"session {args.session}: nothing waits for approval")
        for call in waiting:
            print(f"{call.address}  {' → '.join(call.path)}  {call.tool} {call.arguments}")
        return 0
    with opened(args.db, readonly=False) as store:
        try:
            seq = decide(store, args.session, args.call, approve=not args.deny, reason=args.reason)
        except (DecisionRefused, ConcurrencyError) as refused:
            print(f"agent-core approve: session {args.session} refused the decision: {refused}", file=sys.stderr)
            return REFUSED
    what = "denied" if args.deny else "approved"
    print(f"session {args.session}: {args.call} {what} (record {seq})")
    return 0
