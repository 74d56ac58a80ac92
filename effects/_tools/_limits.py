"""``ToolLimits``: the bounds a :class:`~effects.Toolbox` puts on its tools, and applying them.

* ``timeout_ms`` (default 120,000): the timeout of a tool that declares none
  (``@tool(timeout_ms=...)`` wins); ``None`` lets such tools run unbounded.
* ``max_threads`` (default 8): sync tools of one toolbox running at once in
  worker threads. Each toolbox has its own limiter, so hanging sync tools of one
  agent never take the threads another agent's tools (or anyio's shared
  default limiter, which stores and other libraries use) need. A call waiting
  for a thread counts against its timeout.
* ``max_result_chars`` (default 100,000): longer results (and failure texts)
  are cut, and a marker saying so and giving the full length is appended, so
  the log and the model never receive a 20 MB result whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import anyio.lowlevel
import msgspec

from agent_core import ToolFailure, ToolResult, ToolSuccess

DEFAULT_TOOL_TIMEOUT_MS = 120_000
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

    def __post_init__(self) -> None:
        for name in ("timeout_ms", "max_threads", "max_result_chars"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                allowed = " or None" if name == "timeout_ms" else ""
                raise ValueError(f"ToolLimits: expected a positive int{allowed} for {name}, got {value!r}")


def truncated(result: ToolResult, max_chars: int) -> ToolResult:
    """``result`` with its text cut to ``max_chars`` and the :data:`TRUNCATED` marker appended, when longer."""
    text = result.content if isinstance(result, ToolSuccess) else result.error
    if len(text) <= max_chars:
        return result
    cut = text[:max_chars] + TRUNCATED.format(kept=max_chars, total=len(text))
    if isinstance(result, ToolFailure):
        return msgspec.structs.replace(result, error=cut)
    return msgspec.structs.replace(result, content=cut)


class ThreadLimiter:
    """A capacity limiter of ``tokens`` for one toolbox, made for the event loop that uses it.

    anyio binds a limiter to the loop (and backend) it first ran on; an agent
    may run under ``anyio.run`` more than once, so a new loop gets a new limiter.
    """

    __slots__ = ("_limiter", "_token", "tokens")

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self._token: object = None
        self._limiter: anyio.CapacityLimiter | None = None

    def current(self) -> anyio.CapacityLimiter:
        """The limiter for the running event loop."""
        token = anyio.lowlevel.current_token()
        if self._limiter is None or token != self._token:
            self._token, self._limiter = token, anyio.CapacityLimiter(self.tokens)
        return self._limiter
