"""``agent-core workflow SOURCE [SESSION] [--mermaid]``: a session's workflow as a table or a Mermaid diagram."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import msgspec

from agent_core import SessionStarted, Workflow, decode_log, transition_table, workflow_mermaid, workflow_problems

from .._store import load_state
from ._logs import CommandError, command, opened, print_json, table

EPILOG = """\
SOURCE is a JSON-lines log (its session-started carries the workflow in
config.workflow), a JSON file holding one workflow object, or a store with
SESSION. The transitions are listed in the order they are tried: by source
state, trigger, then descending priority.
"""

_workflow_json = msgspec.json.Decoder(Workflow)


def register(subparsers: Any) -> None:
    """Add the ``workflow`` subcommand."""
    parser = subparsers.add_parser(
        "workflow",
        help="show a session's workflow: its states, tools and transitions",
        description="Show the workflow a session declares, as a table or a Mermaid stateDiagram-v2.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="SOURCE", help="a .jsonl log, a workflow .json file, or a store")
    parser.add_argument("session", metavar="SESSION", nargs="?", help="the session's id, when SOURCE is a store")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--mermaid", action="store_true", help="print a Mermaid stateDiagram-v2")
    output.add_argument("--json", action="store_true", help="print the workflow as JSON")
    parser.set_defaults(func=command("workflow", run))


def run(args: argparse.Namespace) -> int:
    """Print the workflow of SOURCE (and SESSION), once it is one a session would accept."""
    workflow, tools = _load(args)
    problems = workflow_problems(workflow, tools)
    if problems:
        raise CommandError(
            f"{args.source}: a session would refuse this workflow: {'; '.join(problems)}; fix the workflow"
        )
    if args.mermaid:
        print(workflow_mermaid(workflow), end="")
    elif args.json:
        print_json(workflow)
    else:
        print(_text(workflow))
    return 0


def _load(args: argparse.Namespace) -> tuple[Workflow, frozenset[str] | None]:
    """The workflow, and the tools its session declares (``None`` for a workflow file of its own)."""
    if args.session is not None:
        with opened(args.source) as store:
            state = load_state(store, args.session, 1)
        return _declared(state.config.workflow, f"session {args.session!r}"), frozenset(state.tools.keys())
    path = Path(args.source)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CommandError(
            f"cannot read {path}: {error.strerror}; expected a log, a workflow file or a store"
        ) from None
    if path.suffix == ".json":
        try:
            return _workflow_json.decode(data), None
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise CommandError(
                f"{path}: expected one workflow object (states, initial, transitions), got: {error}"
            ) from None
    start = decode_log(data.split(b"\n", 1)[0] + b"\n", source=str(path))[0]
    if not isinstance(start, SessionStarted):
        raise CommandError(f"{path}: expected a log that starts with session-started")
    return _declared(start.config.workflow, str(path)), frozenset(tool.name for tool in start.tools)


def _declared(workflow: Workflow | None, where: str) -> Workflow:
    if workflow is None:
        raise CommandError(
            f"{where} declares no workflow (its session-started has no config.workflow); "
            "every tool is offered in every step of such a session"
        )
    return workflow


def _text(workflow: Workflow) -> str:
    states = table(
        ("STATE", "TOOLS", "NEED APPROVAL"),
        [
            (
                s.name + (" (initial)" if s.name == workflow.initial else ""),
                ", ".join(s.tools) or "-",
                ", ".join(s.approval) or "-",
            )
            for s in workflow.states
        ],
    )
    moves = [(t.source, t.trigger, t.guard or "-", str(t.priority), t.target) for t in transition_table(workflow)]
    transitions = table(("FROM", "TRIGGER", "GUARD", "PRIORITY", "TO"), moves) if moves else "no transitions"
    return f"{states}\n\n{transitions}"
