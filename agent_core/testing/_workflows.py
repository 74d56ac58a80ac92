"""Random workflows over a session's tools, with guards and rules the kit registers for them.

The kit's guards and rules are pure and read only their arguments, so a
property can recompute what they decide:

* guards ``testing:always``, ``testing:never``, ``testing:even-time`` (the
  triggering input's timestamp is even), ``testing:raises`` (raises
  ``ValueError("raised as asked")``, as a buggy guard would);
* rules ``testing:by-parameters``: the verdict named by the call's
  ``"verdict"`` argument (``allow`` when absent), with reason ``"as asked"``;
  ``"raise"`` makes it raise ``ValueError("raised as asked")``.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._config import ToolDefinition
from .._inputs import AgentInput
from .._rules import ALLOW, ProposedCall, Verdict, register_guard, register_rule
from .._state import AgentState
from .._workflow import Workflow, WorkflowState, WorkflowTransition

RAISING_GUARD = "testing:raises"
"""The kit's guard that raises, so that properties meet a buggy guard."""

GUARDS = ("testing:always", "testing:never", "testing:even-time", RAISING_GUARD)
"""The guards the kit registers; :func:`workflows` draws among them (and no guard)."""

ACTIONS = ("approve", "reject")
"""The actions (``workflow-action-taken``) :func:`workflows` draws transitions for."""

VERDICT_RULE = "testing:by-parameters"
"""The rule the kit registers: the verdict the call's ``"verdict"`` argument names."""


@register_guard("testing:always")
def _always(state: AgentState, trigger: AgentInput) -> bool:
    return True


@register_guard("testing:never")
def _never(state: AgentState, trigger: AgentInput) -> bool:
    return False


@register_guard("testing:even-time")
def _even_time(state: AgentState, trigger: AgentInput) -> bool:
    return trigger.timestamp % 2 == 0


@register_guard(RAISING_GUARD)
def _raises(state: AgentState, trigger: AgentInput) -> bool:
    raise ValueError("raised as asked")


@register_rule(VERDICT_RULE)
def _by_parameters(call: ProposedCall, state: AgentState) -> Verdict:
    asked = call.arguments.get("verdict") if isinstance(call.arguments, dict) else None
    if asked == "raise":
        raise ValueError("raised as asked")
    if asked in ("retry", "ask", "stop"):
        return Verdict(kind=asked, reason="as asked")
    return ALLOW


def workflows(tools: tuple[ToolDefinition, ...], *, max_states: int = 4) -> SearchStrategy[Workflow]:
    """Workflows that ``session-started`` accepts with ``tools``: 1 to ``max_states`` states, each
    offering a subset of the tools (some needing approval there), and transitions between them
    triggered by those tools or by :data:`ACTIONS`, with the kit's guards and priorities."""
    names = tuple(tool.name for tool in tools)

    @st.composite
    def build(draw: st.DrawFn) -> Workflow:
        count = draw(st.integers(1, max_states))
        states = []
        for i in range(count):
            offered = tuple(draw(st.lists(st.sampled_from(names), unique=True, min_size=1))) if names else ()
            approval = tuple(name for name in offered if draw(st.integers(0, 3)) == 0)
            states.append(WorkflowState(name=f"s{i}", tools=offered, approval=approval))
        transitions = []
        for _ in range(draw(st.integers(0, 2 * count))):
            # Triggered by a tool's success or by one of two actions (a person's decisions).
            trigger = draw(st.sampled_from((*names, *ACTIONS)))
            transitions.append(
                WorkflowTransition(
                    source=f"s{draw(st.integers(0, count - 1))}",
                    target=f"s{draw(st.integers(0, count - 1))}",
                    tool="" if trigger in ACTIONS else trigger,
                    action=trigger if trigger in ACTIONS else "",
                    guard=draw(st.sampled_from(("", *GUARDS))),
                    priority=draw(st.integers(0, 2)),
                )
            )
        initial = f"s{draw(st.integers(0, count - 1))}"
        return Workflow(states=tuple(states), initial=initial, transitions=tuple(transitions))

    return build()
