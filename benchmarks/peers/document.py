"""The JSON document of a run (``benchmarks/results/peers.json``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, environment

from .guarantees import GUARANTEES, guarantee
from .report import Summary, versions
from .workload import MODEL_CALLS_PER_TURN

NAME = "peers"


def document(summary: Summary, command: str, preset: str, seconds: float, wins: list[str]) -> dict[str, Any]:
    """Settings, versions, the guarantees with their targets, every contender's numbers beside its target, the long
    runs' per-turn series (wall and CPU time), the peer wins."""
    results = summary.results
    entries = []
    for contender in results.contenders:
        entry: dict[str, Any] = {
            "framework": contender.framework,
            "form": contender.form,
            "persistence": contender.persistence,
            "how": contender.note,
            **summary.of(contender),
            **summary.verdict(contender),
            "long_session": summary.long_verdict(contender),
            "overhead_samples_us": [round(v, 2) for v in results.overhead.get(contender.key, [])],
        }
        if contender.key in results.long_runs:
            ours, theirs = results.long_runs[contender.key]
            entry["per_round_us_by_turn"] = per_round(theirs.turn_ns)
            entry["ours_per_round_us_by_turn"] = per_round(ours.turn_ns)
            entry["per_round_cpu_us_by_turn"] = per_round(theirs.turn_cpu_ns)
            entry["ours_per_round_cpu_us_by_turn"] = per_round(ours.turn_cpu_ns)
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
        "guarantees": groups(summary),
        "round_floor_us": results.floor,
        "contenders": entries,
        "peer_wins": wins,
    }


def per_round(turn_ns: list[int]) -> list[float]:
    """Per turn, microseconds per round (one decimal)."""
    return [round(ns / 1000 / MODEL_CALLS_PER_TURN, 1) for ns in turn_ns]


def groups(summary: Summary) -> list[dict[str, Any]]:
    """Per guarantee measured: its words, agent-core's reference, the target, the fastest peer and whether it is met."""
    found = []
    for group in GUARANTEES:
        members = [c for c in summary.results.contenders if guarantee(c) is group]
        if not members:
            continue
        verdicts = {c.key: summary.verdict(c) for c in members if c.framework != "agent-core"}
        measured = {key: v["ratio"] for key, v in verdicts.items() if v.get("ratio") is not None}
        fastest = min(measured, key=measured.__getitem__) if measured else None
        found.append(
            {
                "guarantee": group.name,
                "words": group.words,
                "reference": group.reference,
                "target": group.target,
                "fastest_peer": fastest,
                "ratio": measured.get(fastest) if fastest else None,
                "met": group.met(measured[fastest]) if fastest else None,
                "not_met_by": [key for key, v in verdicts.items() if v.get("met") is False],
            }
        )
    return found


def write(data: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``data`` as indented JSON to ``path`` (default ``benchmarks/results/peers.json``)."""
    target = path or RESULTS / f"{NAME}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2) + "\n")
    return target
