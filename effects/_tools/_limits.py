"""``ToolLimits``: the bounds a :class:`~effects.Toolbox` puts on its tools, and applying them.

* ``timeout_ms`` (default 120,000): the timeout of a tool that declares none
  (``@tool(timeout_ms=...)`` wins); ``None`` lets such tools run unbounded.
* ``max_concurrent_per_session`` (default 16): tool calls of one session
  running at once, async and sync alike. A call over the bound waits (it is
  ``running`` in the state, ``tool-call-started`` is logged) and starts when
  one of the session's calls ends; ``None`` leaves only the process's bound
  (see :class:`ProcessLimits`). The wait does not count against the call's
  timeout: the calls ahead of it are bounded by theirs.
* ``max_threads`` (default 8): sync tools of one toolbox running at once in
  worker threads. Each toolbox has its own limiter, so hanging sync tools of one
  agent never take the threads another agent's tools (or anyio's shared
  default limiter, which stores and other libraries use) need; all toolboxes
  together stay within ``ProcessLimits.max_tool_threads``. A call waiting for a
  thread counts against its timeout.
* ``max_result_chars`` (default 100,000): longer results (and failure texts)
  are cut, and a marker saying so and giving the full length is appended, so
  the log and the model never receive a 20 MB result whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio
import anyio.lowlevel
import msgspec

from agent_core import ToolFailure, ToolResult, ToolSuccess, replace_surrogates

T = TypeVar("T")

DEFAULT_TOOL_TIMEOUT_MS = 120_000
DEFAULT_MAX_CONCURRENT_PER_SESSION = 16
DEFAULT_MAX_THREADS = 8
DEFAULT_MAX_RESULT_CHARS = 100_000

TRUNCATED = "\n\n[tool result truncated: showing the first {kept} of {total} characters]"
"""Appended to a result longer than ``max_result_chars``; ``{total}`` is the full length."""


@dataclass(frozen=True, kw_only=True)
class ToolLimits:
    """The bounds on a toolbox's tools (see the module docstring for what each one does and its default)."""

    timeout_ms: int | None = DEFAULT_TOOL_TIMEOUT_MS
    max_threads: int = DEFAULT_MAX_THREADS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_concurrent_per_session: int | None = DEFAULT_MAX_CONCURRENT_PER_SESSION

    def __post_init__(self) -> None:
        check_positive(self, ("timeout_ms", "max_concurrent_per_session"), ("max_threads", "max_result_chars"))


def check_positive(limits: object, optional: tuple[str, ...], required: tuple[str, ...]) -> None:
    """Raise ``ValueError`` unless each field of ``limits`` named is a positive int (or ``None``, if ``optional``)."""
    for name in optional + required:
        value = getattr(limits, name)
        if value is None and name in optional:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            allowed = " or None" if name in optional else ""
            raise ValueError(f"{type(limits).__name__}: expected a positive int{allowed} for {name}, got {value!r}")


def writable(result: ToolResult) -> ToolResult:
    """``result`` with any lone surrogate in its text replaced by U+FFFD (a file name from ``os.listdir`` that is
    not UTF-8, say), so that every codec can write it: see :func:`agent_core.replace_surrogates`."""
    if isinstance(result, ToolFailure):
        error = replace_surrogates(result.error)
        return result if error is result.error else msgspec.structs.replace(result, error=error)
    content = replace_surrogates(result.content)
    return result if content is result.content else ToolSuccess(content=content)


def truncated(result: ToolResult, max_chars: int) -> ToolResult:
    """``result`` with its text cut to ``max_chars`` and the :data:`TRUNCATED` marker appended, when longer."""
    text = result.content if isinstance(result, ToolSuccess) else result.error
    if len(text) <= max_chars:
        return result
    cut = text[:max_chars] + TRUNCATED.format(kept=max_chars, total=len(text))
    if isinstance(result, ToolFailure):
        return msgspec.structs.replace(result, error=cut)
    return msgspec.structs.replace(result, content=cut)


class PerLoop(Generic[T]):
    """One ``make()`` per event loop (kept in an anyio ``RunVar``), made on first use there.

    anyio binds its limiters and semaphores to the loop (and backend) they first
    ran on; an agent may run under ``anyio.run`` more than once, and a process
    may run loops in several threads, so each loop gets its own.
    """

    __slots__ = ("_make", "_var")

    def __init__(self, make: Callable[[], T], name: str) -> None:
        self._make = make
        self._var: anyio.lowlevel.RunVar[T] = anyio.lowlevel.RunVar(name)

    def current(self) -> T:
        """The running event loop's one."""
        made = self._var.get(None)
        if made is None:
            made = self._make()
            self._var.set(made)
        return made
