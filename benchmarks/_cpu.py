"""Where a run's cores went: CPU seconds of named process trees over an interval, read from Linux's ``/proc``.

A group is the tree under one or more root pids (a server and the processes it
forked, a worker, this process). Its CPU time at a moment is the sum, over the
tree's live processes, of ``utime + stime + cutime + cstime`` from
``/proc/<pid>/stat`` (all threads of a process, and the children it reaped).
The difference of two samples is what the group used in between, also for
processes that start or exit in between as long as a process of the same tree
reaps them (PostgreSQL's postmaster reaps its backends). Not counted: a process
that exits without being reaped inside its group before the second sample (its
time is lost, or lands in the group of whoever reaps it later). A tree nested
in another group's tree (workers are this process's children) is counted in its
own group only. ``other`` is the machine's busy time (``/proc/stat``) that no
group accounts for: other programs, the kernel's own threads, interrupts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


class Sample(NamedTuple):
    """CPU seconds per group, and of the whole machine, at one moment."""

    wall: float
    groups: dict[str, float]
    machine_busy: float


class Usage(NamedTuple):
    """What each group used between two samples: CPU seconds, and the share of the machine's capacity."""

    wall_s: float
    cores: int
    cpu_s: dict[str, float]  # per group, then "other" (busy time no group accounts for), then "idle"

    def share(self, group: str) -> float:
        """The fraction of ``cores x wall_s`` that ``group`` used."""
        capacity = self.cores * self.wall_s
        return self.cpu_s[group] / capacity if capacity else 0.0


def _processes() -> dict[int, tuple[int, int]]:
    """Every live process: pid -> (parent pid, CPU ticks of it and its reaped children)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            text = (PROC / entry.name / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):  # it exited while the folder was read
            continue
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces and parentheses
        utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
        found[int(entry.name)] = (int(fields[1]), utime + stime + cutime + cstime)
    return found


def _machine_busy() -> float:
    """Seconds all cores spent busy since boot (user, nice, system, irq, softirq), from ``/proc/stat``."""
    with open(PROC / "stat") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    return (user + nice + system + irq + softirq) / TICKS


class Meter:
    """Samples the CPU time of named groups of process trees; the first group claims shared processes first."""

    def __init__(self, groups: Mapping[str, Sequence[int]]) -> None:
        self.groups = dict(groups)

    def sample(self) -> Sample:
        processes = _processes()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in processes.items():
            children.setdefault(parent, []).append(pid)
        claimed: set[int] = set()
        totals: dict[str, float] = {}
        # Nested trees first (a worker is this process's child): a group that contains another's root stops there.
        roots = {pid for pids in self.groups.values() for pid in pids}
        for name, pids in self.groups.items():
            ticks = 0
            stack = [pid for pid in pids if pid in processes]
            while stack:
                pid = stack.pop()
                if pid in claimed:
                    continue
                claimed.add(pid)
                ticks += processes[pid][1]
                stack += [child for child in children.get(pid, []) if child not in roots]
            totals[name] = ticks / TICKS
        return Sample(time.monotonic(), totals, _machine_busy())

    def between(self, first: Sample, last: Sample) -> Usage:
        """What each group, the rest of the machine, and nobody (idle) used from ``first`` to ``last``."""
        wall = last.wall - first.wall
        cores = os.cpu_count() or 1
        used = {name: max(0.0, last.groups[name] - first.groups.get(name, 0.0)) for name in last.groups}
        busy = last.machine_busy - first.machine_busy
        used["other"] = max(0.0, busy - sum(used.values()))
        used["idle"] = max(0.0, cores * wall - busy)
        return Usage(wall, cores, used)


def thread_seconds(pids: Sequence[int]) -> dict[str, float]:
    """CPU seconds of the live threads of ``pids``, summed by thread name (``/proc/<pid>/task/<tid>/comm``).

    A thread that exited is not counted here (its time stays in its process's
    total): this splits a process's time between kinds of threads, such as
    Python's (named after the interpreter) and a native runtime's.
    """
    found: dict[str, float] = {}
    for pid in pids:
        try:
            tasks = list(os.scandir(PROC / str(pid) / "task"))
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                text = (Path(task.path) / "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            name = text[text.index("(") + 1 : text.rindex(")")]
            fields = text[text.rindex(")") + 2 :].split()
            found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return found
