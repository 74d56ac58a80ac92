"""``Toolbox``: the tools of a session by name, and one call run with its timeout."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import anyio

from agent_core import ToolDefinition, ToolFailure, ToolResult, not_registered

from .._model import INTERNAL_TOOLS
from . import _messages
from ._tool import Tool, tool


class _Deadline(Protocol):
    def now_ms(self) -> int: ...

    async def sleep_until(self, ms: int) -> None: ...


class Toolbox:
    """The tools a session offers, by name. Plain functions are wrapped with :func:`tool`.

    Raises ``ValueError`` when two tools share a name (the model could not tell
    them apart) or a tool takes the name of an internal tool.
    """

    def __init__(self, tools: Iterable[Tool[..., Any] | Callable[..., Any]] = ()) -> None:
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
                    f"two tools are named {wrapped.name!r}; expected unique names (pass name=... to @tool)"
                )
            self._tools[wrapped.name] = wrapped

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

    async def run(self, name: str, arguments: str, tool_call_id: str, clock: _Deadline) -> ToolResult:
        """Run one call to completion: a result, never an exception (cancellation aside).

        An unknown name and a call that outlives its tool's ``timeout_ms`` (on
        ``clock``) become failures the model reads.
        """
        found = self._tools.get(name)
        if found is None:
            return ToolFailure(error=not_registered(name, tool_call_id, self._tools))
        timeout = found.definition.timeout_ms
        if timeout is None:
            return await found.invoke(arguments, tool_call_id)
        return await _with_timeout(found, arguments, tool_call_id, clock, timeout)


async def _with_timeout(
    found: Tool[..., Any], arguments: str, tool_call_id: str, clock: _Deadline, timeout_ms: int
) -> ToolResult:
    # The deadline waits without parking when the clock allows it: a tool that is
    # working must not look idle to ``settled()`` because its timer is asleep.
    wait = getattr(clock, "wait_until", clock.sleep_until)
    deadline = clock.now_ms() + timeout_ms
    result: list[ToolResult] = []
    async with anyio.create_task_group() as group:

        async def call() -> None:
            result.append(await found.invoke(arguments, tool_call_id))
            group.cancel_scope.cancel("the tool finished before its timeout")

        async def watch() -> None:
            await wait(deadline)
            group.cancel_scope.cancel(f"the tool's timeout of {timeout_ms} ms passed")

        group.start_soon(call)
        group.start_soon(watch)
    if result:
        return result[0]
    return ToolFailure(error=_messages.timed_out(found.name, tool_call_id, timeout_ms, found.definition.idempotent))
