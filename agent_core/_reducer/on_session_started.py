"""``session-started``: the first input of every log."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import SCHEMA_VERSION, SessionStarted
from .._state import AgentState
from .._toolset import ToolSet
from ._common import reject
from ._workflow import check_workflow


def on_session_started(state: AgentState, inp: SessionStarted) -> AgentState:
    """Fix the session's id, configuration, tools, workflow and rules. Accepted once, first."""
    if state.started:
        reject(
            state,
            inp,
            "already-started",
            "first-input",
            f"session {state.session_id!r} has already started; session-started is accepted only as the first input",
        )
    if not inp.session_id:
        reject(state, inp, "empty-id", "session-id-present", "expected a non-empty session_id, got an empty string")
    if inp.schema_version != SCHEMA_VERSION:
        reject(
            state,
            inp,
            "schema-version",
            "current-schema",
            f"expected schema_version {SCHEMA_VERSION}, got {inp.schema_version}; "
            "decode older logs with agent_core.decode_log, which upcasts them",
        )
    tools = ToolSet(inp.tools)
    if len(tools) != len(inp.tools):
        names = [tool.name for tool in inp.tools]
        repeated = sorted({name for name in names if names.count(name) > 1})
        reject(
            state,
            inp,
            "duplicate-tool",
            "tool-names-unique",
            f"tool names must be unique; repeated: {', '.join(repeated)}",
        )
    check_workflow(state, inp)
    workflow = inp.config.workflow
    return replace(
        state,
        workflow_state=workflow.initial if workflow is not None else "",
        started=True,
        session_id=inp.session_id,
        config=inp.config,
        tools=tools,
        timestamp=inp.timestamp,
        step=state.step + 1,
    )
