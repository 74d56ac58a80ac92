"""Benchmark of the model adapters: their overhead per streamed chunk, against the raw SDK stream.

Run ``python benchmarks/adapters.py --help`` for what each measurement means.
Prints a table and writes ``benchmarks/results/adapters.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
from _adapters_server import server_process
from _adapters_timing import measure_provider

HELP = """\
Measurements (time.perf_counter_ns, interleaved runs after a warm-up; median and min per chunk):

1. end to end   One streamed response of N chunks (default 1,000) from a local server on a loopback
                port: the raw SDK call iterating its stream (`async for chunk in stream`), and the
                adapter's complete() (request mapping, the same SDK stream, folding every chunk into a
                ModelReply, text to on_text). Shapes: "text" (N text deltas) and "tools" (4 parallel
                tool calls whose arguments arrive in N pieces). overhead = adapter - raw, per chunk.
2. fold only    The adapter's fold over the N chunks already parsed by the SDK, against a bare
                `async for` over the same list: the adapter's own cost with no network or parsing.
Target: adapter overhead below 5% of the raw SDK iteration, end to end."""


def report(rows: list[dict[str, Any]]) -> str:
    """The table of microseconds per chunk."""
    us = 1e-3
    lines = []
    for row in rows:
        raw, adapter, bare, fold = row["raw"], row["adapter"], row["bare"], row["fold"]
        overhead = adapter.median_ns - raw.median_ns
        lines.append(
            (
                row["provider"],
                row["shape"],
                row["chunks"],
                f"{raw.median_ns * us:.2f}",
                f"{adapter.median_ns * us:.2f}",
                f"{overhead * us:+.2f}",
                f"{100 * overhead / raw.median_ns:+.1f}%",
                f"{(fold.median_ns - bare.median_ns) * us:.3f}",
            )
        )
    headers = (
        "provider",
        "shape",
        "chunks",
        "raw us/chunk",
        "adapter us/chunk",
        "overhead",
        "overhead %",
        "fold us/chunk",
    )
    return c.table(headers, lines)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1000, help="chunks per streamed response (default 1000)")
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per measurement (default 15)")
    args = parser.parse_args(argv)
    with server_process(args.chunks) as url:
        rows = [row for name in ("openai", "anthropic") for row in measure_provider(name, url, args.repeat)]
    print(report(rows))
    path = c.write_results("adapters", {"chunks": args.chunks, "repeat": args.repeat, "rows": rows})
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
