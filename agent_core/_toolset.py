"""``ToolSet``: the session's tools, looked up by name, compared in the order they were declared."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ._config import ToolDefinition


class ToolSet(Mapping[str, ToolDefinition]):
    """A read-only mapping name -> :class:`ToolDefinition` that keeps the declared order.

    The order is part of the state (a model call offers the tools in it), so
    two tool sets are equal only when they hold the same tools in the same
    order, and equal tool sets encode to the same bytes. Duplicate names are
    the caller's to refuse (``session-started`` does).
    """

    __slots__ = ("_by_name", "_tools")

    def __init__(self, tools: Iterable[ToolDefinition] = ()) -> None:
        self._tools = tuple(tools)
        self._by_name = {tool.name: tool for tool in self._tools}

    def __getitem__(self, name: str) -> ToolDefinition:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ToolSet):
            return self._tools == other._tools
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._tools)

    def __repr__(self) -> str:
        return f"ToolSet({list(self._tools)!r})"

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tools in declared order."""
        return self._tools


def not_registered(name: str, tool_call_id: str, registered: Iterable[str]) -> str:
    """The failure a call to a tool nobody registered completes with: it names the tools that exist.

    The reducer records it for a call to a tool the session does not declare;
    a runner whose toolbox lacks a declared tool uses the same words.
    """
    known = ", ".join(sorted(registered)) or "none"
    return f"tool {name!r} is not registered (tool call {tool_call_id!r}); registered tools: {known}"
