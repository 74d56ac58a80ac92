"""Inputs a given state accepts, drawn from what the state is waiting for.

The generators read the state the way a runner would: the phase, the open and
awaiting tool calls, the streaming message, the timers that are due. They
follow the design's semantics independently of the reducer's guards, so an
input drawn here that the reducer refuses is a bug in one of the two.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._handoff import handoff_targets
from .._inputs import AgentInput
from .._phase import Phase, phase
from .._state import AgentState
from ._builders import BUILDERS
from ._draw import actions_now, due_at, pick
from ._per_kind import per_kind

# How often each kind is drawn among those possible, most progress first (shrinking
# prefers the front of the list): a session mostly moves forward, now and then it
# is cancelled, interrupted or times out.
_WEIGHTS = tuple(
    per_kind(
        {
            "re-act-observed": 6,
            "tool-call-started": 6,
            "tool-call-completed": 5,
            "llm-message-completed": 4,
            "tool-call-approved": 3,
            "user-message-received": 2,
            "llm-message-started": 2,
            "session-started": 1,
            "tool-call-denied": 1,
            "llm-call-failed": 1,
            "context-window-expanded": 1,
            "history-tool-calls-added": 1,
            "timer-fired": 1,
            "re-act-cancelled": 1,
            "workflow-action-taken": 2,
            "tool-call-input-required": 1,
            "tool-call-input-provided": 2,
            "tool-call-task-created": 1,
            "answer-rejected": 1,
            "pool-verdict-received": 2,
            "context-compacted": 6,
            "child-spent": 1,
            "handed-off": 2,
        },
        "weights",
    ).items()
)


def next_input_kinds(state: AgentState) -> tuple[str, ...]:
    """The input tags :func:`next_input` can draw for ``state``: valid in its phase *and* with
    something to act on (``tool-call-started`` needs a pending call, ``timer-fired`` a timer...)."""
    turn = state.turn
    if not state.started:
        return ("session-started",)
    kinds = {"user-message-received"}
    if actions_now(state, state.timestamp):
        kinds.add("workflow-action-taken")
    if turn is None:
        return tuple(kinds)
    kinds.add("re-act-cancelled")
    if due_at(turn, state.tool_calls) is not None:
        kinds.add("timer-fired")
    current = phase(state)
    summarizing = state.compaction is not None and state.compaction.request is not None
    if current is Phase.THINKING and summarizing:
        kinds.update(("llm-call-failed", "context-compacted"))
        if state.config.budget_pool:
            kinds.add("pool-verdict-received")
    elif current is Phase.THINKING:
        kinds.add("llm-call-failed")
        if turn.streaming_message_id:
            kinds.add("llm-message-completed")
        else:
            kinds.update(("llm-message-started", "re-act-observed", "context-window-expanded", "answer-rejected"))
            kinds.add("history-tool-calls-added")
            if handoff_targets(state):
                kinds.add("handed-off")
        if state.config.budget_pool:
            kinds.add("pool-verdict-received")
    calls = state.tool_calls
    if current is Phase.ACTING:
        kinds.add("tool-call-completed")
        statuses = [calls[i] for i in turn.open_call_ids]
        if any(call.status == "pending" and call.retry_at is None for call in statuses):
            kinds.add("tool-call-started")
        if any(call.status == "running" for call in statuses):
            kinds.add("tool-call-input-required")
        if any(call.status == "running" and not call.task_id for call in statuses):
            kinds.add("tool-call-task-created")
        if any(call.status == "running" for call in statuses):
            kinds.add("child-spent")
        if all(call.retry_at is not None for call in statuses):
            kinds.discard("tool-call-completed")
    if turn.awaiting_ids and current in (Phase.ACTING, Phase.AWAITING_APPROVAL):
        waiting = {calls[i].status for i in turn.awaiting_ids}
        if "awaiting-approval" in waiting:
            kinds.update(("tool-call-approved", "tool-call-denied"))
        if "awaiting-input" in waiting:
            kinds.add("tool-call-input-provided")
    return tuple(sorted(kinds))


def next_input(state: AgentState, *, kind: str | None = None) -> SearchStrategy[AgentInput]:
    """Inputs that ``state`` accepts, drawn from what it waits for.

    ``kind`` (a tag from :func:`next_input_kinds`) fixes the input kind; by
    default one is drawn, weighted towards progress. Timestamps repeat the
    state's millisecond often and jump ahead now and then (so deadlines pass).
    """
    kinds = next_input_kinds(state)
    if kind is not None and kind not in kinds:
        raise ValueError(f"cannot draw a {kind!r} input in this state; expected one of: {', '.join(kinds)}")
    return _next_inputs(state, kind)


@st.composite
def _next_inputs(draw: st.DrawFn, state: AgentState, kind: str | None) -> AgentInput:
    return draw_next(draw, state, kind)


def draw_next(draw: st.DrawFn, state: AgentState, kind: str | None = None) -> AgentInput:
    """Draw one input ``state`` accepts (see :func:`next_input`) inside a composite strategy.

    Drawing values directly, rather than building a strategy per state, keeps
    long sessions cheap to generate.
    """
    if kind is None:
        kinds = next_input_kinds(state)
        # While a retry backoff runs, its timer is what usually comes next; and a model call
        # that failed tends to fail again (an outage), which exercises the backoff.
        boost = {"timer-fired": 5} if phase(state) is Phase.RETRYING else {}
        if state.turn is not None and state.turn.attempt > 0:
            boost["llm-call-failed"] = 5
        weighted = [tag for tag, weight in _WEIGHTS if tag in kinds for _ in range(boost.get(tag, weight))]
        kind = pick(draw, weighted)
    return BUILDERS[kind](draw, state)
