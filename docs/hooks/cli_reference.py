"""MkDocs hook: the command-line reference, generated from the ``--help`` of every ``agent-core`` command.

A page holding the line ``<!-- cli-reference -->`` gets, in its place, one
section per command with the help text the installed ``agent-core`` prints, so
the reference cannot drift from the code.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker with the reference (pages without it are left as they are)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())


def reference() -> str:
    """Every command's help, as Markdown sections, in the order ``agent-core --help`` lists them."""
    from effects.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix the width so the page is the same anywhere
    parser = build_parser()
    parts = ["## agent-core", "", "```text", parser.format_help().rstrip(), "```", ""]
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in subparsers.choices.items():
        parts += [f"## agent-core {name}", "", "```text", command.format_help().rstrip(), "```", ""]
    return "\n".join(parts)
