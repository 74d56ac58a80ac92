"""A turn's machine instructions beside a hand-written asyncio loop's, counted by valgrind: figures the machine's load does not move.

CPU time on a shared machine moves with everything else the machine runs: two
runs of ``benchmarks/turn.py`` an hour apart can differ by half. Instructions
executed do not: counted by valgrind's ``callgrind`` tool over the same turns
they repeat to a tenth of a percent, so two versions of the code (or two
settings) can be compared in one run each, however busy the machine. They are
a proxy: a turn's CPU time also pays for cache misses and the collector, which
instructions weigh differently, so the targets stay the CPU-time ones of
``benchmarks/turn.py``; read these for what changed, and by how much. They
overstate SHA-256 (the journal's chain, digests and snapshots): valgrind hides
the processor's SHA instructions, so the hash runs in software at about 28
instructions a byte, a fifth of the ``MemoryStore`` turn's count for about 2%
of its time.

The turn is ``benchmarks/turn.py``'s: a user message, a model call asking for
two tool calls in parallel, the two calls, a model call answering (streamed).
Each contender runs in a process of its own under valgrind, with counting on
only around the measured turns (after imports and warm-up turns):

* ``hand-written loop``: plain asyncio, a task per effect (``turn.py``'s);
* ``the reducer alone``: ``transition`` and ``effects_at`` over the inputs of
  the same turns, recorded beforehand;
* ``agent-core, asyncio`` and ``agent-core, trio``: ``Agent`` in memory,
  default timeouts and turn deadline;
* ``agent-core, asyncio, MemoryStore``: the same session journaled to a
  ``MemoryStore`` (the journal's own work: encoding, the hash chain, the turn
  digests, snapshots).

Needs valgrind (Debian's ``valgrind`` package, which has ``callgrind_control``);
without it the script says so and exits. Run ``python benchmarks/instructions.py``
(``--turns`` to change the 300 measured turns). Prints a table and writes
``benchmarks/results/instructions.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table, write_results

CONTENDERS = {
    "hand": "hand-written loop (a task per effect)",
    "reducer": "the reducer alone (no runner)",
    "asyncio": "agent-core, asyncio",
    "trio": "agent-core, trio",
    "memory-store": "agent-core, asyncio, MemoryStore",
}
WARM_UP_TURNS = 20
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=300, help="turns counted per contender (default 300)")
    parser.add_argument("--inner", choices=tuple(CONTENDERS), help=argparse.SUPPRESS)  # run under valgrind
    args = parser.parse_args()
    if args.turns <= 0:
        parser.error(f"--turns: expected a positive number of turns, got {args.turns}")
    if args.inner is not None:
        run_counted(args.inner, args.turns)
        return
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    if missing:
        sys.exit(
            f"instructions.py: {' and '.join(missing)} not found; this benchmark counts instructions with "
            "valgrind's callgrind tool. Install Debian's valgrind package (apt-get install valgrind) and run it again."
        )
    counts: dict[str, int] = {}
    for name, label in CONTENDERS.items():
        print(f"counting {label} ({args.turns} turns under valgrind)...", file=sys.stderr, flush=True)
        counts[name] = count(name, args.turns)
    per_turn = {name: total / args.turns for name, total in counts.items()}
    report(per_turn, args.turns)
    path = write_results("instructions", {"turns": args.turns, "instructions": counts, "per_turn": per_turn})
    print(f"\nwrote {path}")


def count(name: str, turns: int) -> int:
    """The instructions ``name``'s measured turns executed: the script run again under valgrind, counting on
    only around those turns."""
    with tempfile.TemporaryDirectory(prefix="agent-core-instructions-") as folder:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={os.path.join(folder, 'callgrind.out')}",
                sys.executable,
                __file__,
                "--inner",
                name,
                "--turns",
                str(turns),
            ],
            capture_output=True,
            text=True,
        )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        sys.exit(f"instructions.py: counting {name!r} under valgrind failed (exit {done.returncode}):\n{tail}")
    return int(found.group(1))


def counting(on: bool) -> None:
    """Switch valgrind's counting on or off for this process."""
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())], check=True, capture_output=True)


def run_counted(name: str, turns: int) -> None:
    """Under valgrind: warm up, then run ``turns`` turns of ``name`` with counting on."""
    import anyio
    import turn

    from agent_core import effects_at, transition
    from effects import Agent, MemoryStore, open_session

    if name == "hand":

        async def hand() -> None:
            await turn.hand_turns(WARM_UP_TURNS)
            counting(True)
            await turn.hand_turns(turns)
            counting(False)

        asyncio.run(hand())
        return

    async def session(recorded: list[Any] | None = None) -> None:
        model, tools, config = turn.turn_model(), [turn.lookup], turn.CONFIG
        running = (
            open_session(MemoryStore(), "counted", model, tools=tools, config=config)
            if name == "memory-store"
            else Agent(model, tools=tools, config=config).running()
        )
        async with running as agent:
            for n in range(WARM_UP_TURNS):
                agent.send(f"warm-up {n}")
                await agent.turn_done()
            if recorded is not None:
                recorded.append(agent.state)
                agent.subscribe(lambda event: recorded.append(event.input) if event.type == "input-received" else None)
            else:
                counting(True)
            for n in range(turns):
                agent.send(f"question {n}")
                await agent.turn_done()
            if recorded is None:
                counting(False)

    if name == "reducer":
        recorded: list[Any] = []
        asyncio.run(session(recorded))
        state, inputs = recorded[0], recorded[1:]
        counting(True)
        for inp in inputs:
            state = transition(state, inp)
            effects_at(state)
        counting(False)
        return
    anyio.run(session, backend="trio" if name == "trio" else "asyncio")


def report(per_turn: dict[str, float], turns: int) -> None:
    hand = per_turn["hand"]
    rows = [
        (CONTENDERS[name], f"{value / 1000:,.0f}", "" if name == "hand" else f"{value / hand:.2f}x")
        for name, value in per_turn.items()
    ]
    print(f"One turn, instructions per turn (thousands), {turns} turns counted by callgrind\n")
    print(table(("contender", "k instructions/turn", "x hand loop"), rows))
    print(f"\ntrio / asyncio: {per_turn['trio'] / per_turn['asyncio']:.2f}x")


if __name__ == "__main__":
    main()
