"""The ``agent-core`` command line. Each subcommand lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Callable, Sequence

from ._extensions import IMPORT_HELP, load_extensions
from ._guard import guarded
from ._logs import USAGE_ERROR, CommandError

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
    "approve",
    "ui",
    "mcp-serve",
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
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE", help=IMPORT_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"effects.cli.{name.replace('-', '_')}").register(subparsers)
    for sub in subparsers.choices.values():  # also accepted after the command's name
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
        sub.add_argument(
            "--import", dest="more_imports", action="append", default=[], metavar="MODULE", help=IMPORT_HELP
        )
    return parser


_DEBUG_HELP = "on a failure, print the Python traceback too (for a bug report)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agent-core`` console script; returns the exit code.

    Every failure ends as one line on stderr and a non-zero exit (see ``_guard``); never a traceback
    unless ``--debug`` asks for it.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    modules = [*args.imports, *getattr(args, "more_imports", [])]
    try:
        return guarded(args.command, _with_extensions(modules, args.func), args)
    finally:
        # Free what the command left in reference cycles while the interpreter is whole: a Temporal client or
        # event loop freed during finalization crashes it (the SDK's Rust threads call into a dying interpreter).
        gc.collect()


def _with_extensions(
    modules: list[str], run: Callable[[argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    """``run``, after the user's rules and guards are loaded (see ``_extensions``)."""

    def loaded(args: argparse.Namespace) -> int:
        try:
            load_extensions(modules)
        except CommandError as error:
            print(f"agent-core {args.command}: {error}", file=sys.stderr)
            return USAGE_ERROR
        return run(args)

    return loaded


if __name__ == "__main__":
    sys.exit(main())
