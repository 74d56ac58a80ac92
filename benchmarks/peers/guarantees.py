"""Contenders grouped by what a crash may lose, each group with agent-core's reference and the target it must reach.

Ratios are only meaningful between contenders that promise the same thing, so
every contender names its guarantee (:attr:`~.workload.Contender.guarantee`)
and is compared with the agent-core contender of that guarantee:

* ``input``: every input durable (SQLite, ``synchronous=FULL``) before what
  depends on it: agent-core's default against LangGraph's ``durability="sync"``.
* ``turn``: a crash loses at most the turn in progress: agent-core's
  ``durability="turn"`` against pydantic-ai's one commit per run and
  LangGraph's ``durability="exit"``.
* ``memory`` and ``none``: in memory, with and without in-memory persistence.
* ``background`` (LangGraph's default ``durability="async"``: checkpoints
  written while the next step runs, so a crash loses the steps in flight) and
  ``process`` (agent-core's ``synchronous=NORMAL``: survives a crash of the
  process, not a power cut) match no other contender: shown against
  agent-core's default, without a target.
"""

from __future__ import annotations

from dataclasses import dataclass

from .workload import Contender


@dataclass(frozen=True)
class Guarantee:
    """What a crash may lose, the agent-core contender compared with, and the ratio each peer must reach."""

    name: str
    words: str
    reference: str
    beats_by: float | None = None

    def met(self, ratio: float | None) -> bool | None:
        """Whether ``ratio`` (peer / agent-core) reaches the target; ``None`` without a target or a ratio."""
        if self.beats_by is None or ratio is None:
            return None
        return ratio > 1 and ratio >= self.beats_by

    @property
    def target(self) -> str:
        """The target as printed: ``> 1x`` (beat each peer) or ``>= 2x``; ``-`` without one."""
        if self.beats_by is None:
            return "-"
        return "> 1x" if self.beats_by <= 1 else f">= {self.beats_by:g}x"


GUARANTEES = (
    Guarantee(
        "input",
        "every input durable before what depends on it (SQLite, synchronous=FULL)",
        "agent-core [sqlite]",
        beats_by=1,
    ),
    Guarantee(
        "turn",
        "a crash loses at most the turn in progress (SQLite, synchronous=FULL)",
        "agent-core durability=turn [sqlite]",
        beats_by=2,
    ),
    Guarantee("memory", "in memory, with in-memory persistence", "agent-core [memory]", beats_by=50),
    Guarantee("none", "in memory, no persistence", "agent-core [none]", beats_by=50),
    Guarantee(
        "background",
        "checkpoints written while the next step runs: a crash loses the steps in flight (no agent-core equal)",
        "agent-core [sqlite]",
    ),
    Guarantee(
        "process",
        "every input durable across a crash of the process, not a power cut (no peer equal)",
        "agent-core [sqlite]",
    ),
)
"""The groups, in the order the tables print them."""

BY_NAME = {g.name: g for g in GUARANTEES}

LONG_FORMS = ("create_react_agent", "create_agent")
"""LangGraph's prebuilt agent (and its successor's name): the peer of the long-session targets."""
LONG_TARGETS = {"memory": 1000.0, "sqlite": 50.0}
"""Late-round cost of the prebuilt agent / agent-core's, by persistence: the long-session targets."""
CPU_JUDGED = ("none", "memory")
"""Persistence whose long-session ratio is judged on CPU time: both conversations are CPU-bound there, and the
wall time of agent-core's few-millisecond turns measures the machine's other processes. With SQLite it is wall
time: waiting for a commit's fsync is part of the cost of durability, and CPU time would hide it."""


def guarantee(contender: Contender) -> Guarantee:
    """The group of ``contender``; a contender naming no known group is a mistake in its side module."""
    found = BY_NAME.get(contender.guarantee)
    if found is None:
        raise ValueError(
            f"{contender.key} names guarantee {contender.guarantee!r}; expected one of {', '.join(BY_NAME)}: "
            "set it where the contender is built"
        )
    return found


def is_reference(contender: Contender) -> bool:
    """True for the agent-core contender every other one of its guarantee is compared with."""
    return contender.key == guarantee(contender).reference


def long_target(contender: Contender) -> float | None:
    """The late-round ratio ``contender`` must reach, if it is the prebuilt agent with a checkpointer."""
    if contender.framework != "langgraph" or not contender.form.startswith(LONG_FORMS):
        return None
    return LONG_TARGETS.get(contender.persistence)


def long_clock(contender: Contender) -> str:
    """``"cpu"`` or ``"wall"``: the time the long-session ratio of ``contender`` is judged on (:data:`CPU_JUDGED`)."""
    return "cpu" if contender.persistence in CPU_JUDGED else "wall"
