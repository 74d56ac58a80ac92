"""Turning the measurements into tables (ratios peer / agent-core) and the JSON document."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from .guarantees import guarantee, is_reference, long_clock, long_target
from .measure import BYTES_AT_ROUNDS, WINDOW_ROUNDS, Memory
from .pair import LongRun
from .workload import MODEL_CALLS_PER_TURN, Contender

PACKAGES = (
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langchain-core",
    "langchain",
    "pydantic-ai-slim",
    "agent-core",
)


@dataclass
class Results:
    """Everything one run measured, by contender key; long runs of peers carry agent-core's run from their pair
    (``partners``: the key of the agent-core contender each long run was paired with)."""

    contenders: list[Contender]
    settings: dict[str, int]
    overhead: dict[str, list[float]] = field(default_factory=dict)
    long_runs: dict[str, tuple[LongRun, LongRun]] = field(default_factory=dict)
    memory: dict[str, Memory] = field(default_factory=dict)
    floor: dict[str, float] = field(default_factory=dict)  # benchmarks.peers.floor.round_floor, in this run

    partners: dict[str, str] = field(default_factory=dict)

    def reference(self, contender: Contender) -> Contender:
        """The agent-core contender ``contender`` is compared with: the reference of its guarantee."""
        key = guarantee(contender).reference
        found = next((c for c in self.contenders if c.key == key), None)
        if found is None:
            raise ValueError(f"{contender.key} is compared with {key}, which this run does not measure")
        return found


CLOCKS = (("wall", ""), ("cpu", "_cpu"))
"""The two times of a long run's turns, and the suffix of their names in :meth:`Summary.long_values`."""


def versions() -> dict[str, str]:
    """Installed versions of the frameworks compared."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def number(value: float | None, digits: int = 3) -> str:
    """A value with ``digits`` significant digits (``-`` when absent)."""
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if value < 10**digits else f"{value:.0f}"


def ratio(peer: float | None, ours: float | None) -> str:
    """``peer / ours`` as ``12.3x``; ``-`` when either is absent."""
    if peer is None or ours is None or ours == 0:
        return "-"
    return f"{number(peer / ours)}x"


def size(value: int | None) -> str:
    """Bytes as B, kB, MB or GB."""
    if value is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{number(value / scale)} {unit}"
    return f"{value} B"


def median(values: Sequence[float]) -> float | None:
    """The median, or ``None`` for no values."""
    return statistics.median(values) if values else None


class Summary:
    """Per contender, the numbers the tables show (a reference's long-run numbers are medians over its pairs)."""

    def __init__(self, results: Results) -> None:
        self.results = results
        self.rounds = results.settings["long_rounds"]
        self.turns = self.rounds // MODEL_CALLS_PER_TURN
        window = WINDOW_ROUNDS // MODEL_CALLS_PER_TURN
        self.early = (0, window)
        self.late = (self.turns - window, window)

    def long_values(self, run: LongRun) -> dict[str, Any]:
        """Early and late µs per round (wall and CPU), bytes, resume ms of one long run."""
        return {
            "early_us": run.per_round_us(*self.early),
            "late_us": run.per_round_us(*self.late),
            "early_cpu_us": run.per_round_us(*self.early, cpu=True),
            "late_cpu_us": run.per_round_us(*self.late, cpu=True),
            "bytes_at_100": run.bytes_at.get(BYTES_AT_ROUNDS),
            "bytes_at_end": run.bytes_at.get(self.rounds),
            "resume_ms": median(run.resume_ms),
            "resumed_messages": run.resumed_messages if run.resume_ms else None,
        }

    def of(self, contender: Contender) -> dict[str, Any]:
        """The numbers of ``contender``, and agent-core's from the same pairs (key ``ours``)."""
        results = self.results
        values: dict[str, Any] = {"overhead_us": median(results.overhead.get(contender.key, []))}
        memory = results.memory.get(contender.key)
        values["peak_bytes"] = memory.peak_bytes if memory else None
        values["held_bytes"] = memory.held_bytes if memory else None
        partnered = [key for key, partner in results.partners.items() if partner == contender.key]
        if partnered:
            pairs = [results.long_runs[key][0] for key in partnered]
            each = [self.long_values(run) for run in pairs]
            for name in each[0]:
                values[name] = median([v[name] for v in each if v[name] is not None])
            values["pairs"] = len(pairs)
        elif contender.key in results.long_runs:
            ours, theirs = results.long_runs[contender.key]
            values.update(self.long_values(theirs))
            values["ours"] = self.long_values(ours)
        return values

    def verdict(self, contender: Contender) -> dict[str, Any]:
        """Its guarantee, the agent-core contender it is compared with, µs per round of each, the ratio, the target
        and whether it is met (``None`` for a reference or a guarantee without a target)."""
        group = guarantee(contender)
        found: dict[str, Any] = {"guarantee": group.name, "guarantee_words": group.words}
        if is_reference(contender):
            return found | {"reference": True}
        ours = self.of(self.results.reference(contender))["overhead_us"]
        theirs = self.of(contender)["overhead_us"]
        measured = theirs / ours if theirs is not None and ours else None
        return found | {
            "compared_with": group.reference,
            "ratio": measured,
            "target": group.target,
            "met": group.met(measured),
        }

    def long_verdict(self, contender: Contender) -> dict[str, Any] | None:
        """Late rounds of the prebuilt agent's long run against agent-core's from the same pair, wall and CPU time,
        with the target and the ratio it is judged on (``judged_on``: CPU time in memory, wall time on SQLite)."""
        target = long_target(contender)
        if target is None or contender.key not in self.results.long_runs:
            return None
        theirs = self.of(contender)
        ours = theirs["ours"]
        ratios = {clock: theirs[f"late{suffix}_us"] / ours[f"late{suffix}_us"] for clock, suffix in CLOCKS}
        measured = ratios[long_clock(contender)]
        return {
            "rounds": [self.rounds - WINDOW_ROUNDS + 1, self.rounds],
            "ours_us": ours["late_us"],
            "theirs_us": theirs["late_us"],
            "ours_cpu_us": ours["late_cpu_us"],
            "theirs_cpu_us": theirs["late_cpu_us"],
            "wall_ratio": ratios["wall"],
            "cpu_ratio": ratios["cpu"],
            "judged_on": long_clock(contender),
            "ratio": measured,
            "target": f">= {target:g}x at round 1000",
            "met": measured >= target if self.rounds >= 1000 else None,
        }
