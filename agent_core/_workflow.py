"""Workflows as data: named states, the tools each offers, and the transitions between them.

A :class:`Workflow` travels in ``session-started`` (so a log stays
self-contained and any language can read it). The session is always in one
workflow state (``AgentState.workflow_state``); the model is offered only the
tools that state lists, and a call to any other tool completes with a failure
naming the state and the tools valid in it.

A transition is triggered, in its ``source`` state, by a tool call of a given
name completing with a success (``tool``), or by a ``workflow-action-taken``
input naming its ``action`` (a person's decision, such as ``plan-approved``).
Several transitions may share a source and a trigger: they are tried by descending ``priority`` (ties in
declared order) and the first whose guard passes (no guard always passes)
wins. Guards are pure predicates registered by name in code
(:func:`register_guard`).
"""

from __future__ import annotations

import functools
from collections.abc import Collection

import msgspec


class WorkflowState(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """One state: the tools offered in it, and those of them that need a person's approval here."""

    name: str
    tools: tuple[str, ...] = ()
    approval: tuple[str, ...] = ()


class WorkflowTransition(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """Move from ``source`` to ``target`` when a call of ``tool`` succeeds, or when ``action`` is
    taken (exactly one of the two is set), if ``guard`` passes.

    ``guard`` names a registered guard (empty: always passes); higher
    ``priority`` is tried first.
    """

    source: str
    target: str
    tool: str = ""
    action: str = ""
    guard: str = ""
    priority: int = 0

    @property
    def trigger(self) -> str:
        """``tool:<name>`` or ``action:<name>``, as the audit records it."""
        return f"tool:{self.tool}" if self.tool else f"action:{self.action}"


class Workflow(msgspec.Struct, frozen=True, kw_only=True, dict=True, omit_defaults=True):
    """A session's workflow: its states, the one it starts in, and its transitions.

    Lookups by state name and by trigger use indexes built once per workflow,
    on first use (kept on the instance, never encoded or compared).
    """

    states: tuple[WorkflowState, ...]
    initial: str
    transitions: tuple[WorkflowTransition, ...] = ()

    def state(self, name: str) -> WorkflowState:
        """The state called ``name`` (a validated workflow names only its own states)."""
        found = self._states.get(name)
        if found is None:
            raise KeyError(f"workflow state {name!r} is not declared; declared: {', '.join(self.names)}")
        return found

    @property
    def names(self) -> tuple[str, ...]:
        """The state names, in declared order."""
        return tuple(s.name for s in self.states)

    @functools.cached_property
    def _states(self) -> dict[str, WorkflowState]:
        """Each state by name (the first of a repeated name, as a scan in declared order finds it)."""
        index: dict[str, WorkflowState] = {}
        for state in self.states:
            index.setdefault(state.name, state)
        return index

    @functools.cached_property
    def _candidates(self) -> dict[tuple[str, str], tuple[WorkflowTransition, ...]]:
        """The transitions by ``(source, trigger)``, each group in :func:`transition_table`'s order."""
        groups: dict[tuple[str, str], list[WorkflowTransition]] = {}
        for t in transition_table(self):
            groups.setdefault((t.source, t.trigger), []).append(t)
        return {key: tuple(group) for key, group in groups.items()}


class WorkflowMove(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """One entry of the audit: the session moved from ``source`` to ``target``.

    ``step`` is the position of the triggering input in the log (1 for
    ``session-started``), ``trigger`` what triggered it (``tool:<name>`` with
    the call's id in ``tool_call_id``, or ``action:<name>``), ``guard`` the guard that decided (empty:
    an unguarded transition).
    """

    source: str
    target: str
    step: int
    trigger: str
    guard: str = ""
    tool_call_id: str = ""
    at: int = 0


def workflow_problems(workflow: Workflow, tools: Collection[str] | None = None) -> list[str]:
    """What makes ``session-started`` refuse ``workflow``, each problem in a sentence; empty when it holds together.

    ``tools`` are the tool names the session declares; ``None`` skips the checks that need them (a workflow
    read from a file of its own). Whether its guards are registered is not checked here.
    """
    names = workflow.names
    problems: list[str] = []
    declared = "none" if not tools else ", ".join(sorted(tools))
    if len(set(names)) != len(names) or not names:
        problems.append(f"expected at least one state and unique state names, got: {', '.join(names) or 'none'}")
    if workflow.initial not in names:
        problems.append(f"initial state {workflow.initial!r} is not declared; declared: {', '.join(names)}")
    for ws in workflow.states:
        for tool in (*ws.tools, *ws.approval):
            if tools is not None and tool not in tools:
                problems.append(
                    f"state {ws.name!r} names tool {tool!r}, which session-started does not declare "
                    f"(declared tools: {declared})"
                )
        problems.extend(
            f"state {ws.name!r} asks approval for {tool!r}, which it does not offer"
            for tool in ws.approval
            if tool not in ws.tools
        )
    for t in workflow.transitions:
        for end in (t.source, t.target):
            if end not in names:
                problems.append(f"transition {t.source!r} -> {t.target!r} names undeclared state {end!r}")
        if bool(t.tool) == bool(t.action):
            problems.append(f"transition {t.source!r} -> {t.target!r} must name exactly one of tool and action")
        elif t.tool and tools is not None and t.tool not in tools:
            problems.append(
                f"transition {t.source!r} -> {t.target!r} is triggered by undeclared tool {t.tool!r} "
                f"(declared tools: {declared})"
            )
    return problems


def transition_table(workflow: Workflow) -> tuple[WorkflowTransition, ...]:
    """The transitions in the order they are tried: by source, trigger, then descending priority
    (ties keep their declared order)."""
    order = {name: i for i, name in enumerate(workflow.names)}
    indexed = list(enumerate(workflow.transitions))
    indexed.sort(key=lambda item: (order.get(item[1].source, len(order)), item[1].trigger, -item[1].priority, item[0]))
    return tuple(t for _, t in indexed)


def candidates(workflow: Workflow, source: str, trigger: str) -> tuple[WorkflowTransition, ...]:
    """The transitions ``trigger`` (``tool:<name>`` or ``action:<name>``) may take from ``source``,
    in the order they are tried."""
    return workflow._candidates.get((source, trigger), ())


def workflow_mermaid(workflow: Workflow) -> str:
    """The workflow as a Mermaid ``stateDiagram-v2``: states with their tools, then the transitions."""
    lines = ["stateDiagram-v2", f"    [*] --> {_id(workflow.initial)}"]
    for state in workflow.states:
        tools = ", ".join(t + (" (approval)" if t in state.approval else "") for t in state.tools) or "no tools"
        lines.append(f"    {_id(state.name)}: {state.name}: {tools}")
    for t in transition_table(workflow):
        label = (
            (t.tool or f"action {t.action}")
            + (f" [{t.guard}]" if t.guard else "")
            + (f" (priority {t.priority})" if t.priority else "")
        )
        lines.append(f"    {_id(t.source)} --> {_id(t.target)}: {label}")
    return "\n".join(lines) + "\n"


def _id(name: str) -> str:
    """A Mermaid state id for ``name`` (ids may not hold spaces or dashes)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
