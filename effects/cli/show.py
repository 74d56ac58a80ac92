"""``agent-core show DB SESSION``: the whole conversation of a session, tool calls with arguments and results."""

from __future__ import annotations

import argparse
import pydoc
import shutil
import sys
from typing import Any

from .._observe import ConversationEntry, conversation
from .._store import DEFAULT_TREE_LIMIT, SessionNode, session_tree
from ._logs import CommandError, add_db, command, opened, print_json, show_time

EPILOG = """\
nothing is shortened: messages, tool arguments (as indented JSON) and results
are printed whole, with the record number each came from (use it with
`agent-core inspect --at N` or `fork --at N`). On a terminal a long
conversation opens in the pager ($PAGER, default less); --no-pager prints it.

--tree prints the tree of sessions under SESSION instead: the child sessions
its agent tools started (ids `SESSION:<tool call>`), their children, and so on,
each with its inputs, phase and last turn's outcome (at most --limit of them).
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
    parser.add_argument("--tree", action="store_true", help="print the tree of child sessions under SESSION")
    parser.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_TREE_LIMIT,
        metavar="N",
        help=f"with --tree, read at most N sessions below SESSION (default {DEFAULT_TREE_LIMIT})",
    )
    parser.set_defaults(func=command("show", run))


def run(args: argparse.Namespace) -> int:
    """Print the conversation (or the tree); page it when it is longer than the terminal."""
    if args.tree:
        return _tree(args)
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


def _tree(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise CommandError(f"expected --limit of 0 or more sessions, got {args.limit}")
    with opened(args.db) as store:
        tree = session_tree(store, args.session, limit=args.limit)
    if args.json:
        print_json(tree)
        return 0
    print("\n".join(render_tree(tree)))
    return 0


def render_tree(node: SessionNode, indent: str = "", branch: str = "") -> list[str]:
    """The tree as lines: each session's id, the call that runs it, its inputs, phase and last outcome."""
    call = f" (call {node.tool_call_id})" if node.tool_call_id else ""
    outcome = f", last turn {node.outcome}" + (f": {node.reason}" if node.reason else "") if node.outcome else ""
    lines = [f"{indent}{branch}{node.session_id}{call}: {node.inputs} inputs, {node.phase}{outcome}"]
    below = indent + ("" if not branch else "   " if branch == "└─ " else "│  ")
    for i, child in enumerate(node.children):
        lines.extend(render_tree(child, below, "└─ " if i == len(node.children) - 1 else "├─ "))
    if node.left_off:
        lines.append(f"… {node.left_off} more sessions below {node.session_id} not read (raise --limit)")
    return lines


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
