"""Benchmark of the pure core: transition, effects_at, llm_context, log replay, memory.

Run ``python benchmarks/reducer.py --help`` for what each measurement means
and its target. Prints tables and writes ``benchmarks/results/reducer.json``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import _session as s

from agent_core import (
    AgentInput,
    AgentState,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    LlmCallFailed,
    ReActCancelled,
    ReActObserved,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallRequest,
    ToolSuccess,
    decode_log,
    effects_at,
    encode_log,
    initial_state,
    llm_context,
    replay,
    tag_of,
    transition,
)

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
medians carry other processes' noise. The garbage collector runs as usual during every timed
run; the prebuilt sessions are frozen (gc.freeze) so that they are not walked again and again.
"""

SIZES = (100, 1_000, 10_000, 100_000)
SIMPLE = "tool-call-completed"


def label(state: AgentState, inp: AgentInput) -> str:
    """The input's tag, with the variant where one kind has a cheap and a costly case."""
    tag = tag_of(inp)
    if isinstance(inp, ReActObserved):
        return tag + (":continue" if isinstance(inp.observation, ContinueReAct) else ":complete")
    if isinstance(inp, ToolCallCompleted) and state.turn is not None and len(state.turn.open_call_ids) == 1:
        return tag + ":last"
    return tag


def scenarios(base: AgentState) -> tuple[list[AgentInput], dict[str, tuple[AgentState, AgentInput]]]:
    """The mixed turn that follows ``base``, and one (state, input) pair per input kind on ``base``."""
    number, t = base.turns, base.timestamp + 1
    turn = s.turn(number, t)
    pairs: dict[str, tuple[AgentState, AgentInput]] = {"session-started": (initial_state(), s.session_started())}
    state, acting = base, base
    for inp in turn:
        pairs.setdefault(label(state, inp), (state, inp))
        state = transition(state, inp)
        if state.turn is not None and len(state.turn.open_call_ids) == s.CALLS and acting is base:
            acting = state
    thinking = transition(base, turn[0])
    failed = LlmCallFailed(timestamp=t + 1, error="overloaded", retryable=True)
    retrying = transition(thinking, failed)
    assert retrying.turn is not None and retrying.turn.retry_at is not None
    log = base.tool_call_log
    wanted = (log[len(log) - 30], log[len(log) - 40])
    ask = ContinueReAct(tool_calls={f"x{number}": ToolCallRequest(name="delete_file", parameters='{"p":"/x"}')})
    awaiting = transition(thinking, ReActObserved(timestamp=t + 1, called_llm_at=t, observation=ask))
    pairs |= {
        "llm-call-failed": (thinking, failed),
        "timer-fired": (retrying, TimerFired(timestamp=retrying.turn.retry_at)),
        "context-window-expanded": (thinking, ContextWindowExpanded(timestamp=t + 1)),
        "history-tool-calls-added": (thinking, HistoryToolCallsAdded(timestamp=t + 1, tool_call_ids=wanted)),
        "tool-call-approved": (awaiting, ToolCallApproved(timestamp=t + 2, tool_call_id=f"x{number}")),
        "tool-call-denied": (awaiting, ToolCallDenied(timestamp=t + 2, tool_call_id=f"x{number}", reason="no")),
        "re-act-cancelled": (acting, ReActCancelled(timestamp=acting.timestamp + 1, reason="stop")),
    }
    return turn, dict(sorted(pairs.items()))


def per_call(states: dict[str, tuple[Any, Any]], budget_ns: int, repeat: int) -> dict[str, c.Timing]:
    """Time ``function(state)`` for each named (function, state)."""
    out = {}
    for name, (function, state) in states.items():
        times = c.calls_per_run(partial(function, state), budget_ns)

        def run(function: Any = function, state: Any = state, times: int = times) -> None:
            for _ in range(times):
                function(state)

        out[name] = c.measure(run, times, repeat=repeat)
    return out


def transitions(sessions: dict[int, AgentState], budget_ns: int, repeat: int) -> dict[str, dict[int, c.Timing]]:
    """Per-transition timings at each session size: the mixed stream and each input kind.

    ``mixed stream`` folds turns never folded before in each run, so it walks
    paths of the persistent maps that are not in the processor's caches, as a
    replay or a live session does. ``mixed turn (repeated)`` folds the same turn
    again and again, like the per-kind rows: warm caches, the code's own cost.
    Each run takes about ``budget_ns``.
    """
    out: dict[str, dict[int, c.Timing]] = {}
    for size, base in sessions.items():
        turn, pairs = scenarios(base)
        turns = c.calls_per_run(partial(s.fold, base, turn), budget_ns)
        batches = iter(s.fresh_batches(base, turns, repeat + 1))

        def stream(base: AgentState = base, batches: Iterator[list[AgentInput]] = batches) -> None:
            s.fold(base, next(batches))

        out.setdefault("mixed stream", {})[size] = c.measure(stream, turns * s.INPUTS_PER_TURN, repeat=repeat)

        def repeated(base: AgentState = base, turn: list[AgentInput] = turn, turns: int = turns) -> None:
            for _ in range(turns):
                s.fold(base, turn)

        out.setdefault("mixed turn (repeated)", {})[size] = c.measure(repeated, turns * len(turn), repeat=repeat)
        for name, (state, inp) in pairs.items():
            times = c.calls_per_run(partial(transition, state, inp), budget_ns)
            out.setdefault(name, {})[size] = c.measure(c.loop(transition, state, inp, times), times, repeat=repeat)
    return out


def projections(sessions: dict[int, AgentState], budget_ns: int, repeat: int) -> dict[str, dict[int, c.Timing]]:
    """effects_at and llm_context per call at each session size."""
    out: dict[str, dict[int, c.Timing]] = {}
    for size, base in sessions.items():
        turn, _ = scenarios(base)
        thinking = s.fold(base, turn[:-3])  # after the last round's results: 12 calls in context
        acting = s.fold(base, turn[:6])  # three calls open
        named = {
            "effects_at (thinking)": (effects_at, thinking),
            "effects_at (acting)": (effects_at, acting),
            "llm_context (thinking)": (llm_context, thinking),
        }
        for name, timing in per_call(named, budget_ns, repeat).items():
            out.setdefault(name, {})[size] = timing
    return out


def replay_vs_decode(inputs: int, repeat: int) -> dict[str, Any]:
    """decode_log + replay against raw decode_lines of the same JSON-lines bytes."""
    data = encode_log(s.session(max(1, (inputs - 1) // s.INPUTS_PER_TURN)))
    count = data.count(b"\n")
    raw_decoder = msgspec.json.Decoder()
    decoded = decode_log(data)
    timings = c.measure_each(
        {
            "raw_decode_lines": lambda: raw_decoder.decode_lines(data),
            "decode_log": lambda: decode_log(data),
            "replay_only": lambda: replay(decoded),
            "decode_log_and_replay": lambda: replay(decode_log(data)),
        },
        count,
        repeat=repeat,
    )
    return {
        "inputs": count,
        "bytes": len(data),
        **timings,
        "ratio": timings["raw_decode_lines"].median_ns / timings["decode_log_and_replay"].median_ns,
    }


def content_bytes(state: AgentState) -> int:
    """UTF-8 bytes of the session's message contents, tool-call parameters and results."""
    total = sum(len(m.content.encode()) for m in state.messages)
    for record in state.tool_calls.values():
        result = record.result
        text = "" if result is None else result.content if isinstance(result, ToolSuccess) else result.error
        total += len(record.parameters.encode()) + len(text.encode())
    return total


def memory(messages: int) -> dict[str, Any]:
    """Peak and retained traced memory while folding a generated session of ``messages`` messages."""
    turns = s.turns_for_messages(messages)
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    state = s.fold(initial_state(), s.session(turns))  # inputs are generated lazily, so only the state stays
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    content = content_bytes(state)
    return {
        "messages": len(state.messages),
        "tool_calls": len(state.tool_calls),
        "content_bytes": content,
        "peak_bytes": peak,
        "retained_bytes": retained,
        "ratio": peak / content,
        "retained_ratio": retained / content,
        "overhead_per_item_bytes": (retained - content) / (len(state.messages) + len(state.tool_calls)),
        "seconds_traced": time.perf_counter() - start,
    }


# --- report -------------------------------------------------------------------------------


def _ns(timing: c.Timing) -> str:
    return f"{timing.median_ns:,.0f} ({timing.min_ns:,.0f})"


def report_rows(rows: dict[str, dict[int, c.Timing]], sizes: list[int], title: str) -> None:
    """Print one row per measurement: ns per call (min) at each size, calls/s at 1,000, growth."""
    headers = ("", *(f"{s:,} msgs ns (min)" for s in sizes), "/s at 1,000", f"{sizes[-1]:,}/{sizes[0]:,}")
    body = [
        (name, *(_ns(row[s]) for s in sizes), f"{row[1_000].per_second:,.0f}", f"{_growth([row], 'median_ns'):.2f}x")
        for name, row in rows.items()
    ]
    print(f"\n{title}\n{c.table(headers, body)}")


STATS = {"median": "median_ns", "min": "min_ns", "cpu": "cpu_median_ns"}


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target measured in this run, read from the wall-time medians, minimums and CPU-time medians.

    ``ratio_<stat>`` is goal over measured for limits and measured over goal for
    rates, so >= 1 means met. On a busy machine the wall-time medians carry the
    time slices of other processes; CPU time does not, the minimum rarely does.
    """
    specs: list[tuple[str, float, bool, Callable[[str], float]]] = []  # name, goal, higher is better, value
    if "transitions" in data:
        rows = data["transitions"]
        kinds = [row for name, row in rows.items() if not name.startswith("mixed")]
        specs += [
            ("tool-call-completed on 1,000 msgs, /s", 500_000, True, lambda s: _rate(rows[SIMPLE][1_000], s)),
            ("mixed stream on 1,000 msgs, /s", 500_000, True, lambda s: _rate(rows["mixed stream"][1_000], s)),
            ("mixed stream, 100,000 vs 100 msgs", 1.5, False, lambda s: _growth([rows["mixed stream"]], s)),
            ("mixed turn repeated, 100,000 vs 100", 1.5, False, lambda s: _growth([rows["mixed turn (repeated)"]], s)),
            ("worst input kind, 100,000 vs 100 msgs", 1.5, False, lambda s: _growth(kinds, s)),
        ]
    if "per_call" in data:
        calls = list(data["per_call"].values())
        specs.append(("effects_at/llm_context, 100,000 vs 100", 1.5, False, lambda s: _growth(calls, s)))
    if "replay" in data:
        raw, full = data["replay"]["raw_decode_lines"], data["replay"]["decode_log_and_replay"]
        specs.append(("replay / raw decode throughput", 0.33, True, lambda s: getattr(raw, s) / getattr(full, s)))
    if "memory" in data:
        memory_ratio = data["memory"]["ratio"]
        specs.append(("peak memory / content bytes", 3.0, False, lambda s: memory_ratio))
    out = []
    for name, goal, higher, value in specs:
        entry: dict[str, Any] = {"target": name, "goal": goal}
        for label, stat in STATS.items():
            measured = value(stat)
            entry[label] = measured
            entry[f"ratio_{label}"] = measured / goal if higher else goal / measured
        out.append(entry)
    return out


def _rate(timing: c.Timing, stat: str) -> float:
    return float(1e9 / getattr(timing, stat))


def _growth(rows: list[dict[int, c.Timing]], stat: str) -> float:
    """The worst largest-over-smallest session growth among ``rows``."""
    return max(float(getattr(row[max(row)], stat) / getattr(row[min(row)], stat)) for row in rows)


def report(data: dict[str, Any]) -> None:
    """Print every table of the run."""
    for key, title in (
        ("transitions", "transition: ns per input"),
        ("per_call", "per call (runner, every transition): ns"),
    ):
        if key in data:
            report_rows(
                data[key],
                sorted(data[key]["mixed stream" if key == "transitions" else "effects_at (acting)"]),
                f"{title}, median (min)",
            )
    if "replay" in data:
        r = data["replay"]
        print(
            f"\nreplay of {r['inputs']:,} inputs ({r['bytes'] / r['inputs']:.0f} bytes each): ns per input, median (min)"
        )
        steps = ("raw_decode_lines", "decode_log", "replay_only", "decode_log_and_replay")
        print(c.table(("", "ns/input", "inputs/s"), [(k, _ns(r[k]), f"{r[k].per_second:,.0f}") for k in steps]))
    if "memory" in data:
        m = data["memory"]
        print(
            f"\nmemory: {m['messages']:,} messages, {m['tool_calls']:,} tool calls, {m['content_bytes'] / 1e6:.1f} MB"
            f" content; peak {m['peak_bytes'] / 1e6:.1f} MB ({m['ratio']:.2f}x), retained"
            f" {m['retained_bytes'] / 1e6:.1f} MB ({m['retained_ratio']:.2f}x),"
            f" {m['overhead_per_item_bytes']:.0f} bytes of overhead per message or tool call"
        )
    rows = [
        (t["target"], f"{t['goal']:,}", *(f"{t[k]:,.2f} ({t['ratio_' + k]:.2f})" for k in STATS))
        for t in data["targets"]
    ]
    headers = ("target", "goal", *(f"{k} (ratio)" for k in STATS))
    print("\ntargets: measured (ratio to the goal, >= 1 means met)\n" + c.table(headers, rows))


SECTIONS = ("transitions", "per-call", "replay", "memory")


def run(quick: bool, sections: tuple[str, ...]) -> dict[str, Any]:
    """Run the chosen sections; quick runs use fewer repeats, a smaller log and a smaller session."""
    budget_ns, repeat = (500_000, 11) if quick else (1_000_000, 31)
    data: dict[str, Any] = {"mode": "quick" if quick else "full", "sections": list(sections)}
    if "transitions" in sections or "per-call" in sections:
        sessions = s.bases(SIZES)
        # The sessions live through every measurement; freezing them keeps the collector
        # from walking them again and again (they hold no garbage to find).
        gc.freeze()
        if "transitions" in sections:
            data["transitions"] = transitions(sessions, budget_ns, repeat)
        if "per-call" in sections:
            data["per_call"] = projections(sessions, budget_ns, repeat)
        del sessions
        gc.unfreeze()
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
