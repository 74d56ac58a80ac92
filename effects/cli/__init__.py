"""The ``agent-core`` command line. Each subcommand lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Subcommand modules, in the order ``--help`` lists them. Each defines
# ``register(subparsers)`` which adds its parser and sets ``func`` (returns the exit code).
_COMMANDS = (
    # (subcommand modules)
    "run",
    "chat",
    "sessions",
    "replay",
    "inspect",
    "fork",
    "jsonl",
    "show",
    "stats",
    "ui",
    "workflow",
    "worker",
    "submit",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="agent-core",
        description="Run, replay, inspect and fork agent sessions. "
        "An agent is a pure state machine over a log of inputs; every command here works on that log.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"effects.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agent-core`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
