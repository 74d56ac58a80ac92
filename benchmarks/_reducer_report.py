"""The reducer benchmark's report: its tables, and each target read from the wall-time medians, minimums and
CPU-time medians."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _common import Timing, table
from _reducer_fold import SIMPLE


def _ns(timing: Timing) -> str:
    return f"{timing.median_ns:,.0f} ({timing.min_ns:,.0f})"


def report_rows(rows: dict[str, dict[int, Timing]], sizes: list[int], title: str) -> None:
    """Print one row per measurement: ns per call (min) at each size, calls/s at 1,000, growth."""
    headers = ("", *(f"{s:,} msgs ns (min)" for s in sizes), "/s at 1,000", f"{sizes[-1]:,}/{sizes[0]:,}")
    body = [
        (name, *(_ns(row[s]) for s in sizes), f"{row[1_000].per_second:,.0f}", f"{_growth([row], 'median_ns'):.2f}x")
        for name, row in rows.items()
    ]
    print(f"\n{title}\n{table(headers, body)}")


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


def _rate(timing: Timing, stat: str) -> float:
    return float(1e9 / getattr(timing, stat))


def _growth(rows: list[dict[int, Timing]], stat: str) -> float:
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
        print(table(("", "ns/input", "inputs/s"), [(k, _ns(r[k]), f"{r[k].per_second:,.0f}") for k in steps]))
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
    print("\ntargets: measured (ratio to the goal, >= 1 means met)\n" + table(headers, rows))
