"""``session-started``: the first input of every log."""

from __future__ import annotations

from msgspec.structs import replace

from .._compaction._policy import policy_problems
from .._compaction._state import ContextCompaction
from .._config import MAX_STUCK_WINDOW
from .._encodable import MAX_COUNT, MAX_DURATION_MS
from .._handoff import handoff_problems
from .._inputs import SCHEMA_VERSION, SessionStarted
from .._output import output_schema_problem
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
    problems = config_problems(inp)
    if problems:
        reject(state, inp, "bad-config", "config-in-range", "; ".join(problems))
    check_workflow(state, inp)
    _check_lineage(state, inp)
    workflow = inp.config.workflow
    return replace(
        state,
        workflow_state=workflow.initial if workflow is not None else "",
        started=True,
        session_id=inp.session_id,
        config=inp.config,
        tools=tools,
        compaction=ContextCompaction() if inp.config.compaction is not None else None,
        timestamp=inp.timestamp,
        step=state.step + 1,
    )


def _check_lineage(state: AgentState, inp: SessionStarted) -> None:
    """A child session names its parent session, the parent's tool call and the root, none of them itself."""
    lineage = inp.config.lineage
    if lineage is None:
        return
    empty = [
        name for name in ("parent_session_id", "parent_tool_call_id", "root_session_id") if not getattr(lineage, name)
    ]
    if empty:
        reject(
            state,
            inp,
            "bad-lineage",
            "lineage-complete",
            f"a child session's lineage names its parent session, the parent's tool call and the root session; "
            f"got empty {', '.join(empty)}",
        )
    if not 1 <= lineage.depth <= MAX_COUNT:
        reject(
            state,
            inp,
            "bad-lineage",
            "lineage-complete",
            f"expected a child session's lineage depth of 1 or more, got {lineage.depth}",
        )
    if inp.session_id in (lineage.parent_session_id, lineage.root_session_id):
        reject(
            state,
            inp,
            "bad-lineage",
            "lineage-complete",
            f"a child session cannot be its own parent or root; got session {inp.session_id!r} with parent "
            f"{lineage.parent_session_id!r} and root {lineage.root_session_id!r}",
        )


_AT_LEAST_ONE = ("max_identical_tool_calls", "llm_max_attempts")
_COUNTS = ("initial_context_window", "context_window_step", "max_output_retries")
_BUDGETS = ("max_model_calls", "max_tool_calls", "max_tokens", "max_cost", "max_session_cost")
_DURATIONS = ("retry_base_ms", "retry_max_ms")


def config_problems(inp: SessionStarted) -> list[str]:
    """What is out of range in the session's limits, each as "expected ..., got ...": counts and budgets are
    never negative, attempts and the stuck threshold at least 1, durations within :data:`MAX_DURATION_MS`, a
    tool's ``timeout_ms`` positive, a tool's retry policy on an idempotent tool (or forced) naming what it retries."""
    config = inp.config
    problems: list[str] = []

    def need(name: str, value: int | None, low: int, high: int, *, optional: bool = False) -> None:
        if (value is None and optional) or (value is not None and low <= value <= high):
            return
        also = " or None" if optional else ""
        wanted = f"of {low} or more" if high == MAX_COUNT else f"from {low} to {high}"
        problems.append(f"expected {name} {wanted}{also}, got {value}")

    for name in _AT_LEAST_ONE:
        need(name, getattr(config, name), 1, MAX_COUNT)
    for name in _COUNTS:
        need(name, getattr(config, name), 0, MAX_COUNT)
    for name in _BUDGETS:
        need(name, getattr(config, name), 0, MAX_COUNT, optional=True)
    for name in _DURATIONS:
        need(name, getattr(config, name), 0, MAX_DURATION_MS)
    need("max_turn_ms", config.max_turn_ms, 0, MAX_DURATION_MS, optional=True)
    if config.stuck_window != 0:
        need("stuck_window (0 turns the cycle rule off)", config.stuck_window, 4, MAX_STUCK_WINDOW)
    for tool in inp.tools:
        need(f"the timeout_ms of tool {tool.name!r}", tool.timeout_ms, 1, MAX_DURATION_MS, optional=True)
        retry = tool.retry
        if retry is None:
            continue
        need(f"the retry max_attempts of tool {tool.name!r}", retry.max_attempts, 1, MAX_COUNT)
        need(f"the retry base_ms of tool {tool.name!r}", retry.base_ms, 0, MAX_DURATION_MS)
        need(f"the retry max_ms of tool {tool.name!r}", retry.max_ms, 0, MAX_DURATION_MS)
        if not retry.on or not all(retry.on):
            problems.append(
                f"expected the retry of tool {tool.name!r} to name the failures it retries (codes such as "
                f"'timeout' or exception names such as 'ConnectionError'), got on={list(retry.on)}"
            )
        if not tool.idempotent and not retry.force:
            problems.append(
                f"tool {tool.name!r} has a retry policy but is not idempotent; expected idempotent=True (running "
                "it twice is safe), or force=True in its ToolRetry to retry it anyway"
            )
    schema = output_schema_problem(config.output_schema)
    if schema is not None:
        problems.append(schema)
    if config.compaction is not None:
        problems.extend(policy_problems(config.compaction, MAX_COUNT))
    problems.extend(handoff_problems(config, inp.tools))
    return problems
