"""``agent-core replay DB SESSION [--verify]``: fold a stored session with this release's reducer."""

from __future__ import annotations

import argparse
from typing import Any

from agent_core import phase

from .._store import ReplayDiverged, ReplayReport, replay_session
from ._logs import CHECK_FAILED, add_db, add_progress, command, opened, print_json, progress_printer

EPILOG = """\
the hash chain of the records is always checked; --verify also recomputes the
turn digests and state hashes the log recorded, and stops at the first record
where this release's reducer gives another state (exit status 1): run it in CI
before deploying a new reducer over live logs. It also compares the session's
newest snapshot with the log: one that loading would use although it holds
another state fails the check (exit status 1); one loading ignores (it follows
another history of the session) is named, and costs only a longer fold.
"""


def register(subparsers: Any) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay",
        help="replay a stored session, optionally verifying the recorded hashes",
        description="Replay a stored session from its first record with this release's reducer.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db(parser)
    parser.add_argument("--verify", action="store_true", help="compare the recorded turn digests and state hashes")
    parser.add_argument("--until", type=int, metavar="N", help="stop after record N")
    add_progress(parser)
    parser.set_defaults(func=command("replay", run))


def run(args: argparse.Namespace) -> int:
    """Replay, print the outcome; exit 1 on a divergence or a damaged log."""
    with opened(args.db) as store:
        progress = progress_printer(args, f"replaying {args.session}")
        try:
            report = replay_session(store, args.session, verify=args.verify, until=args.until, progress=progress)
        except ReplayDiverged as error:
            _diverged(args, error)
            return CHECK_FAILED
    state = report.state
    problem = report.snapshot_problem
    wrong = bool(problem) and not report.snapshot_ignored
    if args.json:
        print_json(
            {
                "session_id": report.session_id,
                "ok": not wrong,
                "records": report.records,
                "verified": args.verify,
                "turns_checked": report.turns_checked,
                "states_checked": report.states_checked,
                "phase": phase(state).value,
                "state_hash": report.state_hash,
                "snapshot": {
                    "seq": report.snapshot_seq,
                    "problem": report.snapshot_problem,
                    "ignored": report.snapshot_ignored,
                },
            }
        )
        return CHECK_FAILED if wrong else 0
    print(f"session {report.session_id}: {report.records} records replayed")
    if args.verify:
        snapshot = f", the snapshot after record {report.snapshot_seq}" if report.snapshot_seq and not problem else ""
        print(
            f"verified: hash chain, {report.turns_checked} turn digests, {report.states_checked} state hashes{snapshot}"
        )
    else:
        print("checked: hash chain (add --verify to compare the recorded state hashes)")
    outcome = state.last_outcome
    print(f"phase: {phase(state).value}; turns: {state.turns}; last outcome: {outcome.kind if outcome else 'none'}")
    print(f"state hash: {report.state_hash}")
    return _snapshot(args, report)


def _snapshot(args: argparse.Namespace, report: ReplayReport) -> int:
    """Say how the newest snapshot compares with the log; exit 1 when loading would start from a wrong state."""
    if not report.snapshot_problem:
        return 0
    if report.snapshot_ignored:
        print(f"snapshot after record {report.snapshot_seq}: ignored when loading: {report.snapshot_problem}")
        print("It costs only a longer fold; the next snapshot a journal saves supersedes it.")
        return 0
    print(f"snapshot after record {report.snapshot_seq}: WRONG: {report.snapshot_problem}")
    print("Snapshots are caches: export the session and import it into a new store (which makes its own), or")
    print(f"fork it at its last record (agent-core fork {args.db} {report.session_id} --at {report.records}).")
    return CHECK_FAILED


def _diverged(args: argparse.Namespace, error: ReplayDiverged) -> None:
    if args.json:
        fields = ("record", "input_type", "kind", "expected", "actual", "written_by", "rejection_code")
        print_json({"session_id": error.session_id, "ok": False, "divergence": {f: getattr(error, f) for f in fields}})
        return
    print(f"session {error.session_id}: DIVERGED at record {error.record} ({error.input_type})")
    print(f"  compared: {error.kind}")
    print(f"  expected (logged):  {error.expected}")
    print(f"  actual (replayed):  {error.actual}")
    if error.written_by is not None:
        print(f"An older release wrote this store (state format {error.written_by}) and computed its hashes")
        print("differently: export the session and import it into a new store, which records this release's:")
        print(f"  agent-core export {args.db} {error.session_id} -o {error.session_id}.jsonl")
        print(f"  agent-core import NEW_DB {error.session_id}.jsonl")
        return
    if error.unregistered:
        print(f"{error.advice[0].upper()}{error.advice[1:]}.")
        return
    if error.record == 1:
        print("The reducer now behaves differently on this log: keep the release that wrote it.")
        return
    print("The reducer now behaves differently on this log: keep the release that wrote it, or fork the session")
    print(f"before this record (agent-core fork {args.db} {error.session_id} --at {error.record - 1}).")
