"""The JSON document of a run (``benchmarks/results/peers.json``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, environment

from .report import Summary, versions
from .workload import MODEL_CALLS_PER_TURN

NAME = "peers"


def document(summary: Summary, command: str, preset: str, seconds: float, wins: list[str]) -> dict[str, Any]:
    """Settings, versions, every contender's numbers, the long runs' per-turn series, the peer wins."""
    results = summary.results
    entries = []
    for contender in results.contenders:
        entry: dict[str, Any] = {
            "framework": contender.framework,
            "form": contender.form,
            "persistence": contender.persistence,
            "how": contender.note,
            **summary.of(contender),
            "overhead_samples_us": [round(v, 2) for v in results.overhead.get(contender.key, [])],
        }
        if contender.key in results.long_runs:
            ours, theirs = results.long_runs[contender.key]
            entry["per_round_us_by_turn"] = [round(ns / 1000 / MODEL_CALLS_PER_TURN, 1) for ns in theirs.turn_ns]
            entry["ours_per_round_us_by_turn"] = [round(ns / 1000 / MODEL_CALLS_PER_TURN, 1) for ns in ours.turn_ns]
        entries.append({"key": contender.key, **entry})
    return {
        "benchmark": NAME,
        "date": time.strftime("%Y-%m-%d"),
        "command": command,
        "preset": preset,
        "settings": results.settings,
        "seconds": round(seconds, 1),
        "versions": versions(),
        "environment": environment(),
        "contenders": entries,
        "peer_wins": wins,
    }


def write(data: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``data`` as indented JSON to ``path`` (default ``benchmarks/results/peers.json``)."""
    target = path or RESULTS / f"{NAME}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2) + "\n")
    return target
