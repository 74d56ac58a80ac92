"""Hypothesis strategies for agent-core: inputs, configurations, and whole valid sessions.

Requires hypothesis, from the ``testing`` extra (importing this module without it
raises an ``ImportError`` naming the extra); ``import agent_core`` itself never imports it.

Three levels, from blunt to precise:

* :func:`inputs` and one strategy per kind (:func:`tool_call_completed`...):
  structurally valid inputs with arbitrary ids and values; most states refuse
  most of them. Keywords fix fields: ``tool_call_completed(tool_call_id="t1")``.
* :func:`next_input` (``state``): inputs that ``state`` accepts, drawn from
  what it waits for (its phase, open and awaiting calls, streaming message, due
  timers); :func:`invalid_input` (``state``): inputs it must refuse.
* :func:`sessions`: whole input sequences built step by step from the state,
  every step accepted (or, with ``invalid=True``, a few deliberately refused).

Example, a property of your own over random sessions::

    from hypothesis import given
    from agent_core import replay, effects_at
    from agent_core.testing import sessions

    @given(sessions(max_steps=40))
    def test_idle_sessions_run_nothing(inputs):
        state = replay(inputs)
        assert state.turn is not None or effects_at(state) == {}

Generated timestamps stay between 0 and the year 2100, and token counts are
never negative, so every drawn input also survives the JSON and MessagePack codecs.
"""

import shlex
import sys

try:
    import hypothesis  # noqa: F401
except ImportError as error:
    # The pure package does not read how agent-core was installed (effects does): installing hypothesis itself,
    # with this interpreter, works wherever agent-core came from.
    raise ImportError(
        f"agent_core.testing needs hypothesis, from the 'testing' extra of agent-core, which is not installed "
        f"({error}); install it with: {shlex.quote(sys.executable)} -m pip install 'hypothesis>=6.100'"
    ) from None

from ._draw import due_at
from ._invalid import invalid_input
from ._kinds import (
    answer_rejected,
    child_spent,
    context_compacted,
    context_window_expanded,
    handed_off,
    history_tool_calls_added,
    inputs,
    llm_call_failed,
    llm_message_completed,
    llm_message_started,
    pool_verdict_received,
    re_act_cancelled,
    re_act_observed,
    session_started,
    timer_fired,
    tool_call_approved,
    tool_call_completed,
    tool_call_denied,
    tool_call_input_provided,
    tool_call_input_required,
    tool_call_started,
    tool_call_task_created,
    user_message_received,
    workflow_action_taken,
)
from ._next import next_input, next_input_kinds
from ._sessions import fold, sessions
from ._values import (
    agent_configs,
    compaction_policies,
    handoff_setups,
    ids,
    input_objects,
    observations,
    texts,
    timestamps,
    tool_call_requests,
    tool_definitions,
    tool_lists,
    tool_results,
    usages,
)
from ._workflows import ACTIONS, GUARDS, RAISING_GUARD, VERDICT_RULE, workflows

__all__ = [
    "ACTIONS",
    "GUARDS",
    "RAISING_GUARD",
    "VERDICT_RULE",
    "agent_configs",
    "answer_rejected",
    "child_spent",
    "compaction_policies",
    "context_compacted",
    "context_window_expanded",
    "due_at",
    "fold",
    "handed_off",
    "handoff_setups",
    "history_tool_calls_added",
    "ids",
    "input_objects",
    "inputs",
    "invalid_input",
    "llm_call_failed",
    "llm_message_completed",
    "llm_message_started",
    "next_input",
    "next_input_kinds",
    "observations",
    "pool_verdict_received",
    "re_act_cancelled",
    "re_act_observed",
    "session_started",
    "sessions",
    "texts",
    "timer_fired",
    "timestamps",
    "tool_call_approved",
    "tool_call_completed",
    "tool_call_denied",
    "tool_call_input_provided",
    "tool_call_input_required",
    "tool_call_requests",
    "tool_call_started",
    "tool_call_task_created",
    "tool_definitions",
    "tool_lists",
    "tool_results",
    "usages",
    "user_message_received",
    "workflow_action_taken",
    "workflows",
]
