"""The printed tables and the "where a peer wins" list, from a :class:`~.report.Summary`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks._common import table

from .floor import asks
from .guarantees import GUARANTEES, guarantee, is_reference
from .measure import WINDOW_ROUNDS
from .report import Summary, number, ratio, size
from .workload import Contender


def _us(value: float) -> str:
    return f"{number(value)} µs"


def _ms(value: float) -> str:
    return f"{number(value)} ms"


def _bytes(value: float) -> str:
    return size(int(value))


METRICS: tuple[tuple[str, str, Callable[[float], str]], ...] = (
    ("overhead_us", "per round", _us),
    ("early_us", "per round in rounds 1-20", _us),
    ("late_us", "per round in the last 20 rounds", _us),
    ("bytes_at_100", "on disk after 100 rounds", _bytes),
    ("bytes_at_end", "on disk at the end", _bytes),
    ("resume_ms", "to resume", _ms),
    ("peak_bytes", "peak memory", _bytes),
    ("held_bytes", "memory held at the end", _bytes),
)
"""The numbers compared, how to say them, how to print them."""


def ordered(summary: Summary) -> list[tuple[Contender, dict[str, Any]]]:
    """Contenders with their numbers, by guarantee, its agent-core reference first."""
    contenders = sorted(
        summary.results.contenders,
        key=lambda c: (GUARANTEES.index(guarantee(c)), not is_reference(c), c.framework != "agent-core"),
    )
    return [(c, summary.of(c)) for c in contenders]


def baseline(summary: Summary, contender: Contender, values: dict[str, Any], name: str) -> Any:
    """agent-core's value to divide by: from the same pair for long-run numbers, else its reference's median."""
    if is_reference(contender):
        return None
    if "ours" in values and name in values["ours"]:
        return values["ours"][name]
    return summary.of(summary.results.reference(contender))[name]


def met(verdict: dict[str, Any]) -> str:
    """``met``, ``not met`` with the ratio and the target, or ``-`` where no target applies."""
    if verdict.get("met") is None:
        return "-"
    return "met" if verdict["met"] else f"NOT MET ({ratio(verdict['ratio'], 1)} of {verdict['target']})"


def by_guarantee(summary: Summary) -> str:
    """Per guarantee: agent-core's reference and each contender giving the same guarantee, ratio beside target."""
    blocks = []
    for group in GUARANTEES:
        members = [(c, summary.verdict(c)) for c, _ in ordered(summary) if guarantee(c) is group]
        if not members:
            continue
        rows = [
            (
                contender.label,
                number(summary.of(contender)["overhead_us"]),
                ratio(verdict.get("ratio"), 1) if "ratio" in verdict else "(reference)",
                verdict.get("target", ""),
                met(verdict) if "ratio" in verdict else "",
            )
            for contender, verdict in members
        ]
        text = f"{group.name}: {group.words}\n" + table(("contender", "µs/round", "x", "target", "met"), rows)
        compared = [v["ratio"] for c, v in members if v.get("ratio") is not None and c.framework != "agent-core"]
        if group.beats_by is not None and compared:
            fastest = min(compared)
            text += f"\nfastest peer: {ratio(fastest, 1)} (target {group.target}): " + (
                "met" if group.met(fastest) else "NOT MET"
            )
            if summary.results.floor and group.name in ("memory", "none"):
                peer_us = min(summary.of(c)["overhead_us"] for c, v in members if v.get("ratio") == fastest)
                text += "\n" + asks(peer_us, group.beats_by, summary.results.floor)
        blocks.append(text)
    return "\n\n".join(blocks)


def per_round(summary: Summary) -> str:
    """Early against late rounds of the long conversation, by guarantee."""
    late_first = summary.rounds - WINDOW_ROUNDS + 1
    headers = ("contender", "store", "rounds 1-20", f"rounds {late_first}-{summary.rounds}", "late/early", "late x")
    rows = []
    for contender, values in ordered(summary):
        early, late = values.get("early_us"), values.get("late_us")
        rows.append(
            (
                contender.label,
                contender.persistence,
                number(early),
                number(late),
                ratio(late, early),
                ratio(late, baseline(summary, contender, values, "late_us")),
            )
        )
    return table(headers, rows)


def long_session(summary: Summary) -> str:
    """The prebuilt agent's late rounds against agent-core's in the same run, wall and CPU time, beside the
    round-1000 targets; ``on`` names the time the target is judged on (CPU in memory, wall on SQLite)."""
    first, last = summary.rounds - WINDOW_ROUNDS + 1, summary.rounds
    headers = (
        "contender",
        "store",
        f"agent-core µs, rounds {first}-{last}: wall",
        "CPU",
        "peer µs: wall",
        "CPU",
        "x wall",
        "x CPU",
        "on",
        "target",
        "met",
    )
    rows = []
    for contender, _ in ordered(summary):
        verdict = summary.long_verdict(contender)
        if verdict is None:
            continue
        shown = met(verdict) if verdict["met"] is not None else "- (fewer than 1000 rounds)"
        rows.append(
            (
                contender.label,
                contender.persistence,
                number(verdict["ours_us"]),
                number(verdict["ours_cpu_us"]),
                number(verdict["theirs_us"]),
                number(verdict["theirs_cpu_us"]),
                ratio(verdict["wall_ratio"], 1),
                ratio(verdict["cpu_ratio"], 1),
                "CPU" if verdict["judged_on"] == "cpu" else "wall",
                verdict["target"],
                shown,
            )
        )
    return table(headers, rows) if rows else ""


def storage(summary: Summary) -> str:
    """Bytes on disk and resume time of the SQLite configurations."""
    headers = ("contender", "after 100 rounds", f"after {summary.rounds}", "x", "resume ms", "x", "messages")
    rows = []
    for contender, values in ordered(summary):
        if contender.persistence != "sqlite":
            continue
        rows.append(
            (
                contender.label,
                size(values.get("bytes_at_100")),
                size(values.get("bytes_at_end")),
                ratio(values.get("bytes_at_end"), baseline(summary, contender, values, "bytes_at_end")),
                number(values.get("resume_ms")),
                ratio(values.get("resume_ms"), baseline(summary, contender, values, "resume_ms")),
                int(values["resumed_messages"]) if values.get("resumed_messages") else "-",
            )
        )
    return table(headers, rows)


def memory(summary: Summary) -> str:
    """Traced peak memory, and what the conversation still held at its end."""
    headers = ("contender", "store", "peak", "x", "held at end", "x")
    rows = []
    for contender, values in ordered(summary):
        rows.append(
            (
                contender.label,
                contender.persistence,
                size(values["peak_bytes"]),
                ratio(values["peak_bytes"], baseline(summary, contender, values, "peak_bytes")),
                size(values["held_bytes"]),
                ratio(values["held_bytes"], baseline(summary, contender, values, "held_bytes")),
            )
        )
    return table(headers, rows)


def peer_wins(summary: Summary) -> list[str]:
    """Every measurement where a peer did better than agent-core (ratio below 1), in words."""
    wins = []
    for contender, values in ordered(summary):
        if contender.framework == "agent-core":
            continue
        for name, words, show in METRICS:
            theirs, ours = values.get(name), baseline(summary, contender, values, name)
            if theirs is not None and ours and theirs < ours:
                wins.append(f"{contender.key}: {show(theirs)} {words}, agent-core {show(ours)}")
    return wins
