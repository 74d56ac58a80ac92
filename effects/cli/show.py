"""``agent-core show DB SESSION``: the whole conversation of a session, tool calls with arguments and results."""

from __future__ import annotations

import argparse
import pydoc
import shutil
import sys
from typing import Any

from .._observe import ConversationEntry, conversation
from ._logs import add_db, command, opened, print_json, show_time

EPILOG = """\
nothing is shortened: messages, tool arguments (as indented JSON) and results
are printed whole, with the record number each came from (use it with
`agent-core inspect --at N` or `fork --at N`). On a terminal a long
conversation opens in the pager ($PAGER, default less); --no-pager prints it.
"""

_MARKS = {
    "user": ">",
    "assistant": "<",
    "tool-call": "→",
    "tool-result": "←",
    "decision": "!",
    "outcome": "=",
    "handoff": "⇄",
}


def register(subparsers: Any) -> None:
    """Add the ``show`` subcommand."""
    parser = subparsers.add_parser(
        "show",
        help="print a session's whole conversation",
        description="Print a stored session's conversation: messages, tool calls and results, decisions, outcomes.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser)
    parser.add_argument("--no-pager", action="store_true", help="never page, even on a terminal")
    parser.set_defaults(func=command("show", run))


def run(args: argparse.Namespace) -> int:
    """Print the conversation; page it when it is longer than the terminal."""
    with opened(args.db) as store:
        entries = conversation(store, args.session)
    if args.json:
        print_json(entries)
        return 0
    text = "\n".join(render(entries))
    rows = shutil.get_terminal_size().lines
    if not args.no_pager and sys.stdout.isatty() and text.count("\n") + 1 > rows - 1:
        pydoc.pager(text)
    else:
        print(text)
    return 0


def render(entries: list[ConversationEntry]) -> list[str]:
    """The entries as indented text: a header line each, then the full text."""
    origin = entries[0].timestamp if entries else 0
    lines: list[str] = []
    for entry in entries:
        when = show_time(entry.timestamp) if entry.kind == "session" else f"+{(entry.timestamp - origin) / 1000:.3f}s"
        mark = _MARKS.get(entry.kind, "*") if entry.ok else "✗"
        lines.append(f"#{entry.seq:<5} {when:>10}  {mark} {entry.title}")
        lines.extend("        " + line for line in entry.text.splitlines())
    return lines
