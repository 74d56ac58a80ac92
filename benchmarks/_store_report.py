"""The store benchmark's tables, one per phase, and the targets of the live phase."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from _backends import report_backends
from _common import table
from _durable import report_durable

TARGET_BYTES = 1_000_000
TARGET_RESUME_MS = 5.0


def report(results: dict[str, Any]) -> None:
    """Print the tables of the phases that ran."""
    reports: dict[str, Callable[[Any], None]] = {
        "live": report_live,
        "grouped": report_append,
        "big": report_big,
        "growth": report_growth,
        "backends": partial(report_backends, table=table),
        "durable": partial(report_durable, table=table),
        "durable-postgres": partial(report_durable, table=table, where="one PostgreSQL database (fsync on)"),
    }
    for phase, result in results.items():
        reports[phase](result)


def report_live(live_run: dict[str, Any]) -> None:
    """The runner's workload table and the resume line."""
    print(f"The runner's workload, {live_run['rounds']:,} rounds, live with a SQLite journal\n")
    rows: list[tuple[str, ...]] = [
        (
            mode,
            f"{r['inputs']:,}",
            f"{r['commits']:,}",
            f"{r['inputs_per_commit']:.2f}",
            f"{r['inputs'] / r['seconds']:,.0f}",
            f"{r['commit_ms_median']:.3f}",
            f"{r['commit_ms_p99']:.3f}",
            f"{r['bytes'] / 1e6:.3f}",
        )
        for mode, r in ((m, live_run[m]) for m in ("FULL", "NORMAL"))
    ]
    headers = ("synchronous", "inputs", "commits", "inputs/commit", "inputs/s", "commit ms", "p99 ms", "MB on disk")
    print(table(headers, rows))
    resume = live_run["resume"]
    print(
        f"resume (snapshot + tail): {resume['load_ms']:.2f} ms best, {resume['load_ms_median']:.2f} ms median; "
        f"opening the file too: {resume['open_and_load_ms']:.2f} ms best, "
        f"{resume['open_and_load_ms_median']:.2f} ms median "
        f"(targets: <= {TARGET_RESUME_MS} ms, <= {TARGET_BYTES / 1e6:.0f} MB)"
    )


def report_append(appended: dict[str, Any]) -> None:
    """Grouped commits against one commit per input."""
    count, per_commit = appended["inputs"], appended["inputs_per_commit"]
    print(f"\nAppend throughput, the same {count:,} inputs ({per_commit:.2f} per commit when grouped)\n")
    rows = [
        (name, f"{r['inputs_per_second']:,.0f}", f"{r['us_per_input']:.1f}", f"{r['commit_us_median']:.1f}")
        for name, r in appended.items()
        if isinstance(r, dict)
    ]
    print(table(("synchronous, grouping", "inputs/s", "us/input", "commit us (median)"), rows))


def report_growth(growth_rows: list[dict[str, Any]]) -> None:
    """Bytes per turn as the session grows."""
    print("\nLog bytes per turn as the session grows (realistic content, 40 inputs per turn)\n")
    rows = [
        (f"{r['turn']:,}", f"{r['log_bytes']:,}", f"{r['input_bytes']:,}", f"{r['state_bytes']:,}") for r in growth_rows
    ]
    print(table(("turn", "log bytes (stored)", "input bytes (MessagePack)", "state bytes"), rows))


def report_big(r: dict[str, Any]) -> None:
    """The 100,000-input table."""
    print(f"\nA session of {r['inputs']:,} inputs (realistic content), written turn by turn\n")
    rows = [
        ("append (turn per commit, NORMAL)", f"{r['append_inputs_per_second']:,.0f} inputs/s"),
        ("on disk", f"{r['bytes'] / 1e6:.2f} MB (state: {r['state_bytes'] / 1e6:.2f} MB)"),
        ("resume, snapshot at the end", f"{r['resume_ms']:.1f} ms"),
        (f"resume, snapshot + {r['resume_tail_inputs']:,} inputs", f"{r['resume_tail_ms']:.1f} ms"),
        ("resume without snapshots (fold all)", f"{r['fold_all_ms']:.1f} ms"),
        ("replay --verify (chain, digests, hashes)", f"{r['verify_ms']:.1f} ms"),
        ("turn digest / full state hash", f"{r['turn_digest_us']:.0f} us / {r['state_hash_ms']:.1f} ms"),
    ]
    print(table(("measure", "value"), rows))
