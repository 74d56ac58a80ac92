"""``Toolbox``: the tools of a session by name, and one call run within the toolbox's limits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

import anyio

from agent_core import ToolDefinition, ToolFailure, not_registered

from .._clock import TIMED_OUT, Clock, TimedOut, run_until
from .._model import INTERNAL_TOOLS
from . import _messages
from ._limits import PerLoop, ToolLimits, truncated, writable
from ._outcomes import InputRequired, Resumption, TaskCreated, ToolOutcome, checked
from ._process import process_threads
from ._slots import Slots
from ._tool import Tool, tool


class Toolbox:
    """The tools a session offers, by name, and the :class:`ToolLimits` they run within.

    Plain functions are wrapped with :func:`tool`. A toolbox iterates over its
    tools, and building one from another keeps the other's limits, so
    ``Agent(model, tools=Toolbox([...], limits=ToolLimits(timeout_ms=None)))``
    gives an agent other limits than the defaults. Raises ``ValueError`` when
    two tools share a name (the model could not tell them apart) or a tool
    takes the name of an internal tool.
    """

    def __init__(
        self, tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (), *, limits: ToolLimits | None = None
    ) -> None:
        self.limits: ToolLimits = limits or (tools.limits if isinstance(tools, Toolbox) else ToolLimits())
        threads = self.limits.max_threads
        self._threads = PerLoop(lambda: anyio.CapacityLimiter(threads), "effects.Toolbox threads")
        self._tools: dict[str, Tool[..., Any]] = {}
        for item in tools:
            wrapped = item if isinstance(item, Tool) else tool(item)
            if wrapped.name in INTERNAL_TOOLS:
                raise ValueError(
                    f"the tool name {wrapped.name!r} is reserved for an internal tool; "
                    "expected another name (pass name=... to @tool)"
                )
            if wrapped.name in self._tools:
                raise ValueError(
                    f"two tools are named {wrapped.name!r} ({self._tools[wrapped.name]!r} and {wrapped!r}); "
                    "expected unique names (pass name=... to @tool, or another name to Agent.as_tool)"
                )
            self._tools[wrapped.name] = wrapped

    def __iter__(self) -> Iterator[Tool[..., Any]]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool[..., Any]:
        return self._tools[name]

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._tools)

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The definitions ``session-started`` records, in registration order."""
        return tuple(t.definition for t in self._tools.values())

    async def run(
        self,
        name: str,
        arguments: str,
        tool_call_id: str,
        clock: Clock,
        resumption: Resumption | None = None,
        *,
        final: bool = False,
    ) -> ToolOutcome:
        """Run one attempt at a call to its end: an outcome, never an exception (cancellation aside).

        An unknown name and a call that outlives its timeout (the tool's
        ``timeout_ms``, else the toolbox's default, measured on ``clock``)
        become failures the model reads; a result longer than
        ``max_result_chars`` is cut, with a marker giving its full length.
        A tool that suspends the call (:class:`InputRequired`, :class:`TaskCreated`)
        is attempted again with a ``resumption``; each attempt has the timeout.
        ``final``: nothing in the caller's effect waits after this call (the
        agent's ``call-tool`` passes it), so under trio the timeout may cancel the
        effect's own scope instead of one of its own (see ``effects._clock.run_until``).
        """
        found = self._tools.get(name)
        if found is None:
            return ToolFailure(error=not_registered(name, tool_call_id, self._tools), code="not-registered")
        # An async or inline tool's attempt is awaited as it is: no coroutine of this toolbox's in between.
        attempt: Callable[..., Awaitable[ToolOutcome]]
        args: tuple[Any, ...]
        if found.is_async or found.inline:
            attempt, args = found.attempt, (arguments, tool_call_id, resumption)
        else:
            attempt, args = self._in_thread, (found, arguments, tool_call_id, resumption)
        timeout = found.definition.timeout_ms or self.limits.timeout_ms
        outcome: ToolOutcome | TimedOut
        if timeout is None:
            outcome = await attempt(*args)
        else:
            outcome = await run_until(clock, clock.now_ms() + timeout, attempt, *args, final=final)
            if outcome is TIMED_OUT:
                await found.timed_out(tool_call_id, timeout)
                return ToolFailure(
                    error=_messages.timed_out(found.name, tool_call_id, timeout, found.definition.idempotent),
                    code="timeout",
                )
        if isinstance(outcome, InputRequired | TaskCreated):
            return checked(outcome, name, tool_call_id)
        return truncated(writable(outcome), self.limits.max_result_chars)

    async def _in_thread(
        self, found: Tool[..., Any], arguments: str, tool_call_id: str, resumption: Resumption | None
    ) -> ToolOutcome:
        """One attempt of a sync tool: its thread comes from this toolbox's share, then from the process's."""
        own, shared = self._threads.current(), process_threads()
        if shared is None:
            return await found.attempt(arguments, tool_call_id, resumption, threads=own)
        async with Slots((own,)):
            return await found.attempt(arguments, tool_call_id, resumption, threads=shared)
