"""What ``worker`` and ``submit`` share: the ``--temporal`` address, the optional extra, connecting, and the
server's errors as one line each.

Every call to the server ends through the SDK (answered, or its own deadline
passed: ``rpc_timeout``, ``connect_timeout``), never abandoned by cancelling the
task that awaits it: a Rust task of the SDK still running when the interpreter
exits crashes it. ``main`` collects garbage before the interpreter finalizes for
the same reason (an SDK object freed during finalization crashes it too).
"""

from __future__ import annotations

import argparse
import importlib
import re
import time
from datetime import timedelta
from typing import Any

from ._logs import USAGE_ERROR, CommandError

UNAVAILABLE = 69
"""Exit code when the Temporal server cannot be reached or is unavailable (``EX_UNAVAILABLE``)."""


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
    """``effects.temporal`` (its client side only), or a one-line error naming the extra to install."""
    try:
        return importlib.import_module("effects.temporal")
    except ImportError as error:  # MissingExtra says which extra and how to install it
        raise CommandError(f"the Temporal commands cannot start: {error}") from None


class Deadline:
    """The seconds left of a command's ``--timeout``, as the SDK's per-call timeouts."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self.at - time.monotonic())

    def rpc(self) -> timedelta:
        """What is left, for a call's ``rpc_timeout`` (at least a millisecond: zero means none to the SDK)."""
        return timedelta(seconds=max(self.left(), 0.001))


async def connect(args: argparse.Namespace, deadline: Deadline | None = None, *, quiet: bool = False) -> Any:
    """A client of ``--temporal``, or a one-line error saying what to check (exit :data:`UNAVAILABLE`).

    ``quiet``: the SDK's own warnings are not printed (a one-shot command says what went wrong itself); else
    they go to stdout, as the SDK's default runtime prints them.
    """
    from temporalio.client import Client
    from temporalio.runtime import Runtime, TelemetryConfig

    timeout = deadline.rpc() if deadline is not None else None
    runtime = Runtime(telemetry=TelemetryConfig(logging=None)) if quiet else None
    try:
        return await Client.connect(args.temporal, namespace=args.namespace, connect_timeout=timeout, runtime=runtime)
    except RuntimeError as error:
        raise CommandError(
            f"cannot reach the Temporal server at {args.temporal} ({error}); start one (for a try: "
            f"`temporal server start-dev`) or pass --temporal HOST:PORT",
            UNAVAILABLE,
        ) from None


def timed_out(error: BaseException) -> bool:
    """Whether ``error`` is a call the SDK ended because its deadline passed (or it was cancelled)."""
    from temporalio.client import RPCTimeoutOrCancelledError
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(error, RPCTimeoutOrCancelledError):
        return True
    return isinstance(error, RPCError) and error.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED)


def server_error(args: argparse.Namespace, error: Exception) -> CommandError:
    """A call the server refused (``RPCError``, or a worker it would not validate), as one line: unavailable, or
    what it said (a namespace it does not have...)."""
    from temporalio.service import RPCStatusCode

    status = getattr(error, "status", None)
    if status is RPCStatusCode.UNAVAILABLE:
        return CommandError(
            f"the Temporal server at {args.temporal} is unavailable ({error}); check that it runs, then try again",
            UNAVAILABLE,
        )
    name = status.name if status is not None else "refused"
    return CommandError(
        f"the Temporal server at {args.temporal} refused the call: {sdk_text(error)} ({name})", USAGE_ERROR
    )


def sdk_text(error: Exception) -> str:
    """The SDK's message without the dump of the Rust status it may carry (``... Status { code: ..., message:
    "the server's words", details: b"..." }``): its own words and the server's."""
    head, dump, rest = str(error).partition(" Status {")
    said = re.search(r'message: "([^"]*)"', rest) if dump else None
    return head.rstrip(": ") + (f": {said[1]}" if said else "")
