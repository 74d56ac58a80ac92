"""Benchmark of the pure core: transition, effects_at, llm_context, log replay, memory.

Run ``python benchmarks/reducer.py --help`` for what each measurement means
and its target. Prints tables and writes ``benchmarks/results/reducer.json``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
from _reducer_fold import projections, transitions
from _reducer_log import memory, replay_vs_decode
from _reducer_report import report, targets
from _session import bases

HELP = """\
Measurements (time.perf_counter_ns, a warm-up run, then the median and the min of repeated runs):

1. transitions/s  The mixed stream: turns of a user message, 4 rounds of llm-message-started/
                  -completed, re-act-observed asking for 3 parallel tool calls, tool-call-started x3
                  and tool-call-completed x3, then an answer (40 inputs, 6 messages and 12 tool
                  calls per turn), folded onto a 1,000-message session; and each input kind alone.
                  Target: >= 500,000/s for simple inputs (tool-call-completed on 1,000 messages).
2. scaling        Time per transition on sessions of 100, 1,000, 10,000 and 100,000 messages
                  (built by folding one generated log once). "mixed stream" folds turns never
                  folded before in each run, so the paths it walks in the persistent maps are cold
                  in the processor's caches, as in a replay or a live session; "mixed turn
                  (repeated)" and the per-kind rows repeat one input on one state: warm caches.
                  Target: the 100,000-message case within 1.5x of the 100-message case.
3. replay         decode_log + replay of a JSON-lines log of 1,000,000 inputs (100,000 with
                  --quick) against msgspec.json.Decoder().decode_lines of the same bytes (untyped,
                  no validation), timed in turn in the same run. Target: >= 33% of the raw decode
                  throughput.
4. memory         Peak traced memory (tracemalloc) while folding a 100,000-message session
                  (10,000 with --quick), relative to its raw content: the UTF-8 bytes of message
                  contents, tool-call parameters and results. Target: <= 3x.
5. per call       effects_at and llm_context on a thinking state (after a turn's 12 tool results)
                  and effects_at on an acting state (3 open calls), at each session size: the
                  runner derives effects after every transition. Target: no growth (within 1.5x).

The targets table checks the medians and, beside them, the minimums: on a busy machine the
medians carry other processes' noise. The garbage collector runs as it comes during every timed
run (default thresholds, nothing frozen). benchmarks/growth.py measures what it costs as a
session grows.
"""

SIZES = (100, 1_000, 10_000, 100_000)


SECTIONS = ("transitions", "per-call", "replay", "memory")


def run(quick: bool, sections: tuple[str, ...]) -> dict[str, Any]:
    """Run the chosen sections; quick runs use fewer repeats, a smaller log and a smaller session."""
    budget_ns, repeat = (500_000, 11) if quick else (1_000_000, 31)
    data: dict[str, Any] = {"mode": "quick" if quick else "full", "sections": list(sections)}
    if "transitions" in sections or "per-call" in sections:
        sessions = bases(SIZES)
        if "transitions" in sections:
            data["transitions"] = transitions(sessions, budget_ns, repeat)
        if "per-call" in sections:
            data["per_call"] = projections(sessions, budget_ns, repeat)
        del sessions
        gc.collect()
    if "replay" in sections:
        data["replay"] = replay_vs_decode(100_000 if quick else 1_000_000, 5 if quick else 3)
    if "memory" in sections:
        data["memory"] = memory(10_000 if quick else 100_000)
    data["targets"] = targets(data)
    return data


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and write ``benchmarks/results/reducer.json``."""
    parser = argparse.ArgumentParser(
        description=__doc__, epilog=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a short run: fewer repeats, a 100,000-input log")
    mode.add_argument("--full", action="store_true", help="the default: the 1,000,000-input log, more repeats")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run only this section (repeatable)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = run(args.quick, tuple(args.only or SECTIONS))
    data["seconds"] = time.perf_counter() - started
    report(data)
    path = c.write_results("reducer", data)
    print(f"\n{data['mode']} run in {data['seconds']:.0f} s; results written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
