"""Fold an agent-core log and print the conversation it describes.

An agent-core session is a log of inputs: JSON lines, one input per line, the
first one "session-started". Folding the log with agent_core.transition
rebuilds the session's state bit for bit, with no model and no tools. This
script does exactly that, then prints what the state holds: the messages, the
tool calls with their results, the phase the session is in, how the last turn
ended, and the state hash (two folds of the same log print the same hash, on
any machine).

examples:
  python examples/fold_log.py                        the shipped support session
  python examples/fold_log.py path/to/session.jsonl  any log, e.g. one your agent wrote
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import agent_core as ac

DEFAULT_LOG = Path(__file__).parent / "logs" / "support-session.jsonl"
WIDTH = 100
INDENT = " " * 12


def main(argv: list[str] | None = None) -> int:
    """Fold the log named on the command line and print it; return the exit code."""
    args = _parser().parse_args(argv)
    path: Path = args.log
    try:
        data = path.read_bytes()
    except OSError as error:
        return _fail(f"cannot read the log {str(path)!r}: {error.strerror or error}; pass the path of a .jsonl log")
    try:
        inputs = ac.decode_log(data, source=path.name)
    except ac.DecodeError as error:
        return _fail(str(error))  # names the file, the record and the field path
    try:
        state = ac.replay(inputs)
    except ac.InvalidInput as error:
        number = (error.index or 0) + 1
        return _fail(f"{path.name}: input {number} of {len(inputs)} was refused: {error.rejection}")
    print(f"{path.name}: {len(inputs)} inputs, session {state.session_id!r}\n")
    for line in conversation(state):
        print(line)
    print()
    print(f"phase:      {ac.phase(state)}")
    print(f"last turn:  {describe_outcome(state.last_outcome)}")
    print(f"tokens:     {state.input_tokens} in, {state.output_tokens} out")
    print(f"state hash: {ac.state_hash(state)}")
    return 0


def conversation(state: ac.AgentState) -> list[str]:
    """The messages and tool calls of ``state`` on one timeline, as printable lines.

    Both carry ``seq``, the number of the input that created them; calls asked
    for together share it and are printed together, each with its result.
    """
    timeline: list[tuple[int, int, list[str]]] = []
    for message in state.messages:
        if message.role == "assistant" and not message.content:
            continue  # a reply abandoned before it produced text (a retry, or a newer user message)
        timeline.append((message.seq, 0, _block(message.role, message.content)))
    for index, call_id in enumerate(state.tool_call_log):
        record = state.tool_calls[call_id]
        timeline.append((record.seq, 1 + index, _tool_call(record)))
    timeline.sort(key=lambda item: (item[0], item[1]))
    return [line for _, _, lines in timeline for line in lines]


def describe_outcome(outcome: ac.TurnOutcome | None) -> str:
    """How the last turn ended, in words."""
    if outcome is None:
        return "no turn has ended yet"
    text = f"{outcome.kind} (turn {outcome.turn})"
    if outcome.reason and outcome.reason != outcome.kind:
        text += f": {outcome.reason}"  # why it failed, or which budget a final answer followed
    if outcome.detail:
        text += f": {outcome.detail}"
    return text


def _block(label: str, text: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=f"{label:<12}",
        subsequent_indent=INDENT,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [label]


def _tool_call(record: ac.ToolCallRecord) -> list[str]:
    lines = [f"{'tool call':<12}{record.name}({record.parameters})  [{record.id}]"]
    result = record.result
    if result is None:
        lines.append(f"{INDENT}... {record.status}")
    elif isinstance(result, ac.ToolSuccess):
        lines += _block("", "-> " + result.content)
    else:
        lines += _block("", "-> FAILED: " + result.error)
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fold_log.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status: 0 when the log folds; 2 when it cannot be read, decoded or replayed "
        "(one line on stderr names the record and what was wrong).",
    )
    parser.add_argument(
        "log",
        nargs="?",
        type=Path,
        default=DEFAULT_LOG,
        help="a JSON-lines log of agent-core inputs (default: examples/logs/support-session.jsonl)",
    )
    return parser


def _fail(message: str) -> int:
    print(f"fold_log.py: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
