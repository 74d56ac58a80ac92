"""Profile every thread of a process by its CPU time, and dump the stats at exit: only for ``benchmarks/workers.py``.

``benchmarks/workers.py --profile`` puts this folder on a worker's
``PYTHONPATH`` with ``AGENT_CORE_PROFILE=PREFIX``; Python imports this module at
start-up, and the worker writes ``PREFIX.<pid>`` (``pstats``) when it exits
normally (SIGTERM). SIGUSR1 forgets what was profiled so far (the benchmark
sends it as its measured interval begins: start-up is not in the profile). Each thread gets its own ``cProfile`` timed by
``time.thread_time``, so time a thread spends blocked counts nowhere; the SDK
core's Rust threads are not seen.
"""

from __future__ import annotations

import atexit
import cProfile
import os
import pstats
import signal
import threading
import time
from typing import Any

_PREFIX = os.environ.get("AGENT_CORE_PROFILE")
_PROFILES: list[cProfile.Profile] = []


def _begin(*_: Any) -> None:
    profile = cProfile.Profile(time.thread_time)
    _PROFILES.append(profile)
    profile.enable()  # replaces this hook for the calling thread


def _forget(*_: Any) -> None:
    for profile in _PROFILES:
        profile.clear()


def _dump() -> None:
    stats = pstats.Stats(*_PROFILES)
    stats.dump_stats(f"{_PREFIX}.{os.getpid()}")


if _PREFIX:
    threading.setprofile(_begin)  # every thread started from here on: its own profile from its first call
    _begin()
    signal.signal(signal.SIGUSR1, _forget)
    atexit.register(_dump)
