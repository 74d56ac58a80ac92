"""What ``worker`` and ``submit`` share: the ``--temporal`` address, the optional extra, connecting."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from ._logs import CommandError

EXTRA = "the Temporal commands need the `temporal` extra: pip install 'agent-core[temporal]'"


def add_temporal(parser: argparse.ArgumentParser) -> None:
    """``--temporal HOST:PORT``, ``--namespace`` and ``--task-queue``."""
    parser.add_argument(
        "--temporal", metavar="HOST:PORT", default="localhost:7233", help="the Temporal server (default: %(default)s)"
    )
    parser.add_argument("--namespace", default="default", help="the Temporal namespace (default: %(default)s)")
    parser.add_argument(
        "--task-queue",
        default="agent-core",
        metavar="NAME",
        help="the task queue of the workers (default: %(default)s)",
    )


def temporal_module() -> Any:
    """``effects.temporal``, or a one-line error naming the extra to install."""
    try:
        return importlib.import_module("effects.temporal")
    except ModuleNotFoundError as error:
        raise CommandError(f"{EXTRA} ({error})") from None


async def connect(args: argparse.Namespace) -> Any:
    """A client of ``--temporal``, or a one-line error saying what to check."""
    from temporalio.client import Client

    try:
        return await Client.connect(args.temporal, namespace=args.namespace)
    except RuntimeError as error:
        raise CommandError(
            f"cannot reach the Temporal server at {args.temporal} ({error}); start one (for a try: "
            f"`temporal server start-dev`) or pass --temporal HOST:PORT"
        ) from None
