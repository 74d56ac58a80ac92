"""``agent-core submit``: send a user message, an approval, a denial or a cancellation to a session run by workers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from agent_core import (
    AgentInput,
    AgentState,
    InvalidInput,
    ReActCancelled,
    ToolCallApproved,
    ToolCallDenied,
    UserMessageReceived,
)

from .._agent import RandomIds
from .._store import PostgresStore
from ._logs import CommandError, command
from ._temporal import Deadline, add_temporal, connect, server_error, temporal_module, timed_out

REFUSED = 1
"""Exit code when the session refused the input (the Rejection is printed)."""

TIMED_OUT = 3
"""Exit code when ``--timeout`` expired before the input was accepted, or (with --dsn) before the answer."""

FAILED = 4
"""Exit code when the session's workflow failed the input (another writer appended to its log, or it ended)."""

DEFAULT_TIMEOUT = 300.0
"""Seconds ``submit`` waits, in all, for the workers to accept the input and (with --dsn) to answer."""

DESCRIPTION = """\
Send an input to a session that workers run: a user message (TEXT), an
approval (--approve ID), a denial (--deny ID [--reason]) or a cancellation of
the current turn (--cancel). A session that does not exist yet is started. The
session checks the input before accepting it: a refused one prints why and
what the session accepts now, and changes nothing. With --dsn, waits until the
turn is done (or waits for an approval) and prints the assistant's answer.
Waits at most --timeout seconds in all (default 300): then it says how far the
input got and exits with code 3; the workers go on with an accepted input."""

EPILOG = """\
examples:
  agent-core submit s1 "What is 2 + 3?" --dsn postgresql://localhost/agents
  agent-core submit s1 --approve call-1
  agent-core submit s1 --deny call-1 --reason "not on a Friday"

exit codes: 0 accepted (with --dsn: answered), 1 the session refused the input,
2 a bad argument or a call the server refused, 3 --timeout ran out, 4 the
session's workflow failed the input (another writer appended to its log),
69 the Temporal server cannot be reached, 70 a bug in agent-core.
"""


def register(subparsers: Any) -> None:
    """Add the ``submit`` subcommand."""
    parser = subparsers.add_parser(
        "submit",
        help="send a message or an approval to a session run by workers",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("session", metavar="SESSION", help="the session's id (its workflow id)")
    parser.add_argument("text", metavar="TEXT", nargs="?", help="a user message")
    decision = parser.add_mutually_exclusive_group()
    decision.add_argument("--approve", metavar="ID", help="approve the tool call ID")
    decision.add_argument("--deny", metavar="ID", help="deny the tool call ID (the model reads --reason)")
    decision.add_argument("--cancel", action="store_true", help="stop the current turn")
    parser.add_argument("--reason", default="", help="why (with --deny or --cancel)")
    add_temporal(parser)
    parser.add_argument("--dsn", metavar="URL", help="the workers' PostgreSQL store: wait for the answer and print it")
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"give up waiting after this many seconds (default {DEFAULT_TIMEOUT:g}; exit code {TIMED_OUT})",
    )
    parser.set_defaults(func=command("submit", run))


def chosen_input(args: argparse.Namespace) -> AgentInput:
    """The one input the arguments ask for (the workflow stamps its time)."""
    given = sum(x is not None and x is not False for x in (args.text, args.approve, args.deny, args.cancel or None))
    if given != 1:
        raise CommandError("expected exactly one of TEXT, --approve ID, --deny ID or --cancel")
    if args.text is not None:
        return UserMessageReceived(timestamp=0, message_id=RandomIds().new_id("user"), content=args.text)
    if args.approve is not None:
        return ToolCallApproved(timestamp=0, tool_call_id=args.approve)
    if args.deny is not None:
        return ToolCallDenied(timestamp=0, tool_call_id=args.deny, reason=args.reason)
    return ReActCancelled(timestamp=0, reason=args.reason)


def run(args: argparse.Namespace) -> int:
    """Submit the input; print where it landed (and the answer, with --dsn); returns the exit code."""
    temporal = temporal_module()
    inp = chosen_input(args)
    if not args.timeout > 0:
        raise CommandError(f"--timeout expects a number of seconds above 0, got {args.timeout:g}")
    deadline = Deadline(args.timeout)
    accepted: list[int] = []

    async def send() -> AgentState | int | None:
        """The answer, the record the input became, or ``None`` when --timeout ran out first."""
        client = await connect(args, deadline, quiet=True)
        try:
            seq: int = await temporal.submit(
                client, args.session, inp, start=True, task_queue=args.task_queue, rpc_timeout=deadline.rpc()
            )
        except (InvalidInput, CommandError):
            raise
        except Exception as error:  # the SDK's: the deadline passed, the workflow failed, the server refused
            if timed_out(error):
                return None
            raise await _failed(client, args, error, deadline) from None
        accepted.append(seq)
        print(f"session {args.session}: accepted as record {seq}", flush=True)
        if not args.dsn:
            return seq
        return await _answer(temporal, args, seq, deadline)

    try:
        done = anyio.run(send)
    except InvalidInput as refused:
        print(f"agent-core submit: session {args.session} refused the input: {refused.rejection}", file=sys.stderr)
        return REFUSED
    if done is None:
        raise CommandError(_timed_out(args, accepted), TIMED_OUT)
    if isinstance(done, AgentState):
        _print_outcome(done)
    return 0


async def _answer(temporal: Any, args: argparse.Namespace, seq: int, deadline: Deadline) -> AgentState | None:
    """The state once the turn is done, read from the store (no Temporal call: a cancel scope may end it)."""
    store = PostgresStore(args.dsn, readonly=True)
    try:
        with anyio.move_on_after(deadline.left()):
            state: AgentState = await temporal.turn_done(store, args.session, seq)
            return state
    finally:
        store.close()
    return None


async def _failed(client: Any, args: argparse.Namespace, error: Exception, deadline: Deadline) -> CommandError:
    """The SDK's error as one line: the session's workflow failed the input (and why it ended, when it did), or
    the server refused the call."""
    from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowUpdateFailedError

    if not isinstance(error, WorkflowUpdateFailedError):
        return server_error(args, error)
    why = _reasons(error.cause)
    handle = client.get_workflow_handle(args.session)
    try:  # an Update fails without a reason of its own when the workflow ended first: say why it ended
        if (await handle.describe(rpc_timeout=deadline.rpc())).status == WorkflowExecutionStatus.FAILED:
            await handle.result(rpc_timeout=deadline.rpc())
    except WorkflowFailureError as ended:
        why = f"the workflow failed: {_reasons(ended.cause)}"
    except Exception as other:  # the reason stays the Update's; the server's own trouble is not this one's
        if not timed_out(other) and not hasattr(other, "status"):
            raise
    return CommandError(
        f"session {args.session}: its workflow failed the input ({why}); nothing more was written by this "
        f"command; see the log with `agent-core show --dsn URL {args.session}`",
        FAILED,
    )


def _reasons(cause: BaseException | None) -> str:
    """The messages of an SDK failure and its causes, outermost first."""
    reasons: list[str] = []
    while cause is not None and len(reasons) < 5:
        reasons.append(str(cause))
        cause = cause.__cause__
    return ": ".join(r for r in reasons if r) or "no reason given"


def _print_outcome(state: AgentState) -> None:
    last = state.messages[-1] if len(state.messages) else None
    if state.turn is not None:  # waiting for a person
        waiting = [i for i, c in state.tool_calls.items() if c.status == "awaiting-approval"]
        print(f"awaiting approval: {', '.join(sorted(waiting))} (agent-core submit SESSION --approve ID)")
    elif last is not None and last.role == "assistant":
        print(f"assistant > {last.content}")
    outcome = state.last_outcome
    if outcome is not None and state.turn is None:
        print(f"turn {outcome.kind}" + (f" ({outcome.reason})" if outcome.reason else ""))


def _timed_out(args: argparse.Namespace, accepted: list[int]) -> str:
    waited = f"no answer within --timeout {args.timeout:g} s"
    if not accepted:
        return (
            f"session {args.session}: {waited}: the input was not accepted (no worker took it); "
            f"check that `agent-core worker` runs on task queue {args.task_queue!r}, or wait longer with --timeout"
        )
    return (
        f"session {args.session}: {waited} (the input is record {accepted[0]}; the workers go on); "
        f"follow it with `agent-core show {args.dsn} {args.session}`, or wait longer with --timeout"
    )
