"""``ProcessLimits``: bounds on tool calls shared by every agent and session of the process.

* ``max_tool_calls`` (default 64): tool calls running at once, over all
  sessions. A call over the bound waits, ``running`` in its session's state,
  and starts when another ends (after its own session's
  ``ToolLimits.max_concurrent_per_session`` let it through, so one busy session
  never holds places it cannot use).
* ``max_tool_threads`` (default 32): sync tools running at once in worker
  threads, over all toolboxes; each toolbox's ``ToolLimits.max_threads`` still
  bounds its own share. anyio's default thread limiter (40), which stores and
  other libraries use, is not touched.

``None`` leaves a bound off. The bounds hold per event loop (a process
usually runs one; a loop in another thread gets limiters of its own, since
anyio's are bound to one loop). Change them with :func:`set_process_limits`,
best before sessions start: calls already running or waiting keep the bounds
they started under.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from ._limits import PerLoop, check_positive

DEFAULT_PROCESS_TOOL_CALLS = 64
DEFAULT_PROCESS_TOOL_THREADS = 32


@dataclass(frozen=True, kw_only=True)
class ProcessLimits:
    """The process-wide bounds on tool calls (see the module docstring for each one and its default)."""

    max_tool_calls: int | None = DEFAULT_PROCESS_TOOL_CALLS
    max_tool_threads: int | None = DEFAULT_PROCESS_TOOL_THREADS

    def __post_init__(self) -> None:
        check_positive(self, ("max_tool_calls", "max_tool_threads"), ())


class Limiters:
    """The per-loop limiters of one :class:`ProcessLimits` (``None`` where a bound is off)."""

    __slots__ = ("calls", "limits", "threads")

    def __init__(self, limits: ProcessLimits) -> None:
        self.limits = limits
        calls, threads = limits.max_tool_calls, limits.max_tool_threads
        # Places for calls are a semaphore (cheaper than a limiter: tokens need no owner); threads must be a
        # limiter, which is what anyio.to_thread takes.
        self.calls = None if calls is None else PerLoop(lambda: anyio.Semaphore(calls), "effects tool calls")
        self.threads = None if threads is None else PerLoop(lambda: anyio.CapacityLimiter(threads), "effects threads")


_current = Limiters(ProcessLimits())


def set_process_limits(limits: ProcessLimits) -> ProcessLimits:
    """Bound the tool calls of every session in the process by ``limits``; returns the limits it replaces.

    Example: ``effects.set_process_limits(ProcessLimits(max_tool_calls=256))``
    at start-up lets 256 tool calls run at once (the default is 64).
    """
    if not isinstance(limits, ProcessLimits):
        raise TypeError(f"set_process_limits: expected a ProcessLimits, got {limits!r}")
    global _current
    previous, _current = _current.limits, Limiters(limits)
    return previous


def current() -> Limiters:
    """The limiters of the process's limits now (a new object after each :func:`set_process_limits`)."""
    return _current


def process_threads() -> anyio.CapacityLimiter | None:
    """The running loop's limiter of the process's sync-tool threads (``None``: unbounded)."""
    threads = _current.threads
    return None if threads is None else threads.current()
