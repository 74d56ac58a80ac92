"""Strategies for the values inside inputs: configurations, tools, ids, times and payloads."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._compaction._policy import BUILT_IN_STRATEGIES, CompactionPolicy
from .._config import AgentConfig, AgentProfile, ToolDefinition, ToolRetry
from .._inputs import (
    CompleteReAct,
    ContinueReAct,
    Observation,
    OutputProblem,
    ProviderItem,
    Spend,
    ToolCallRequest,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    Usage,
)

T = TypeVar("T")

EPOCH_MS = 1_700_000_000_000
"""A realistic ``timestamp`` (November 2023) that generated sessions start near."""

TOOL_NAMES = ("search", "fetch", "write_file", "run_shell")
"""Tool names the strategies prefer, so generated calls often hit a registered tool."""

PARAMETERS = ("{}", '{"q":"a"}', '{"q":"b"}', '{"path":"/tmp/x","n":2}', '{ "n": 2.0, "path": "/tmp/x" }')
"""JSON arguments the strategies prefer, so identical calls repeat (stuck detection), one of them spelled two ways."""

VERDICT_PARAMETERS = ('{"verdict":"retry"}', '{"verdict":"ask"}', '{"verdict":"stop"}', '{"verdict":"raise"}')
"""Arguments also drawn in sessions with rules: each asks the kit's rule for that verdict (or to raise)."""

_SCHEMAS = ('{"type":"object","properties":{}}', '{"type":"object","properties":{"q":{"type":"string"}}}')


def field(value: T | SearchStrategy[T] | None, default: SearchStrategy[T]) -> SearchStrategy[T]:
    """``default`` when ``value`` is ``None``; ``value`` itself when it is a strategy; else ``just(value)``.

    To fix an optional field to ``None``, pass ``st.none()``.
    """
    if value is None:
        return default
    if isinstance(value, SearchStrategy):
        return value
    return st.just(value)


def timestamps() -> SearchStrategy[int]:
    """Milliseconds since the epoch, from 0 to the year 2100 (what msgspec encodes as an int64)."""
    return st.integers(min_value=0, max_value=4_102_444_800_000)


def ids() -> SearchStrategy[str]:
    """Short non-empty ids from a small alphabet, so that repeats (duplicates) are common."""
    return st.text(alphabet="abxyz019-", min_size=1, max_size=6)


def texts() -> SearchStrategy[str]:
    """Message and result text: any unicode (no surrogates), short."""
    return st.text(max_size=40)


OUTPUT_SCHEMA = '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}'
"""The output schema drawn configurations ask for now and then."""

OUTPUTS = ('{"answer":""}', '{"answer":"42"}', '{"answer":"\\u00e9t\\u00e9"}')
"""Validated outputs for :data:`OUTPUT_SCHEMA` (canonical JSON text)."""


def output_problems() -> SearchStrategy[tuple[OutputProblem, ...]]:
    """What a validator found wrong with an answer: one to three problems, each where and what."""
    problem = st.builds(OutputProblem, where=st.sampled_from(("$", "$.answer", "$.items[0]")), what=texts())
    return st.lists(problem, min_size=1, max_size=3).map(tuple)


def agent_configs(**fields: Any) -> SearchStrategy[AgentConfig]:
    """:class:`AgentConfig` values covering every knob: budgets on and off, both budget policies,
    all three user message policies, deadlines, retries and stuck thresholds. No compaction policy
    unless asked: ``agent_configs(compaction=compaction_policies())``.

    A keyword fixes that field to a value, or draws it from a strategy:
    ``agent_configs(user_message_policy="queue", max_turn_ms=st.none())``.
    """
    defaults: dict[str, SearchStrategy[Any]] = {
        "system_prompt": st.text(max_size=20),
        "initial_context_window": st.integers(0, 12),
        "context_window_step": st.integers(0, 12),
        # Budgets from a few telling values (0, tight, loose), so each shows up in few examples;
        # off half the time, so that turns also run long.
        "max_model_calls": st.sampled_from((None, None, None, None, 0, 1, 3, 8)),
        "max_tool_calls": st.sampled_from((None, None, None, None, 0, 1, 3, 12)),
        "max_tokens": st.sampled_from((None, None, None, 0, 500, 5_000)),
        "max_turn_ms": st.sampled_from((None, None, 1_800_000, 0, 1_000, 30_000, 300_000)),
        "on_budget_exhausted": st.sampled_from(("fail", "final-answer")),
        "max_identical_tool_calls": st.sampled_from((3, 4, 2, 10, 1)),
        "llm_max_attempts": st.sampled_from((3, 2, 4, 1)),
        "retry_base_ms": st.integers(0, 2_000),
        "retry_max_ms": st.integers(0, 30_000),
        "user_message_policy": st.sampled_from(("merge", "queue", "interrupt")),
        # A structured answer now and then (a completed turn then carries its validated output).
        "output_schema": st.sampled_from(("", "", "", "", "", OUTPUT_SCHEMA)),
        "max_output_retries": st.sampled_from((2, 0, 1)),
        "stuck_window": st.sampled_from((6, 0, 4, 10)),
        # Money in nano-units: a few cents, a dollar; a pool now and then.
        "max_cost": st.sampled_from((None, None, None, 0, 30_000_000, 10**9)),
        "max_session_cost": st.sampled_from((None, None, None, 50_000_000, 10**9)),
        "budget_pool": st.sampled_from(("", "", "", "acme:2026-11-27")),
        "compaction": st.none(),
    }
    configs = st.builds(AgentConfig, **{name: field(fields.get(name), strategy) for name, strategy in defaults.items()})
    if fields.keys() & {"agent_name", "handoffs", "agents", "workflow"}:
        return configs
    return st.tuples(configs, handoff_setups()).map(lambda pair: msgspec.structs.replace(pair[0], **pair[1]))


def handoff_setups() -> SearchStrategy[dict[str, Any]]:
    """The handoff fields of an :class:`AgentConfig` (``agent_name``, ``handoffs``, ``agents``), as keywords: none
    most of the time, else a ``front`` agent and a ``desk`` agent (with tools of its own) that hand over to each
    other, and now and then a third, ``back``, that the desk hands over to."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        if draw(st.integers(0, 3)) != 3:
            return {}
        third = draw(st.booleans())
        desk = AgentProfile(
            name="desk",
            description="The help desk.",
            system_prompt="You are the desk.",
            tools=draw(tool_lists(max_size=2)),
            handoffs=("front", "back") if third else ("front",),
            model="scripted",
        )
        agents = (desk, AgentProfile(name="back", handoffs=("front",))) if third else (desk,)
        return {"agent_name": "front", "handoffs": ("desk",), "agents": agents}

    return build()


@st.composite
def compaction_policies(draw: st.DrawFn) -> CompactionPolicy:
    """:class:`CompactionPolicy` values ``session-started`` accepts: each built-in strategy, small windows (so
    compaction fires in short sessions), token and count triggers."""
    window = draw(st.sampled_from((60, 200, 1_000, 8_000)))
    trigger = draw(st.integers(50, 100))
    keep = draw(st.integers(0, trigger - 20))
    policy = CompactionPolicy(context_window_tokens=window, trigger_percent=trigger, keep_recent_percent=keep)
    room = max(1, policy.trigger_tokens - policy.keep_tokens)
    return CompactionPolicy(
        context_window_tokens=window,
        strategy=draw(st.sampled_from(BUILT_IN_STRATEGIES)),
        trigger_percent=trigger,
        keep_recent_percent=keep,
        max_messages=draw(st.sampled_from((None, None, 3, 8))),
        summary_max_tokens=draw(st.integers(1, max(1, room - 1))),
    )


FAILURE_CODES = ("timeout", "", "ConnectionError", "ValueError", "timeout")
"""Failure codes the strategies draw: some that :func:`tool_retries` retry, some that none does."""


def tool_retries() -> SearchStrategy[ToolRetry]:
    """:class:`ToolRetry` policies: one to four attempts, short backoffs, retrying some of :data:`FAILURE_CODES`."""
    return st.builds(
        ToolRetry,
        max_attempts=st.integers(1, 4),
        base_ms=st.integers(0, 2_000),
        max_ms=st.integers(0, 10_000),
        on=st.sampled_from(
            (("timeout", "ConnectionError"), ("timeout", "ConnectionError", "ValueError"), ("timeout",))
        ),
    )


def tool_definitions(*, name: str | SearchStrategy[str] | None = None) -> SearchStrategy[ToolDefinition]:
    """:class:`ToolDefinition` values: with and without approval, idempotent or not, with or without a timeout;
    idempotent ones now and then with a retry policy."""

    @st.composite
    def build(draw: st.DrawFn) -> ToolDefinition:
        idempotent = draw(st.booleans())
        return ToolDefinition(
            name=draw(field(name, st.sampled_from(TOOL_NAMES) | ids())),
            description=draw(st.text(max_size=20)),
            parameters=draw(st.sampled_from(_SCHEMAS)),
            requires_approval=draw(st.sampled_from((False, False, True))),
            idempotent=idempotent,
            timeout_ms=draw(st.none() | st.integers(1, 60_000)),
            retry=draw(st.sampled_from((None, 1, 1)).flatmap(lambda r: tool_retries() if r else st.none()))
            if idempotent
            else None,
        )

    return build()


def tool_lists(*, min_size: int = 0, max_size: int = 4) -> SearchStrategy[tuple[ToolDefinition, ...]]:
    """Tuples of tool definitions with unique names (what ``session-started`` accepts)."""
    tools = st.lists(tool_definitions(), min_size=min_size, max_size=max_size, unique_by=lambda tool: tool.name)
    return tools.map(tuple)


def spends() -> SearchStrategy[Spend]:
    """What a child session spent so far (never negative)."""
    return st.builds(
        Spend,
        model_calls=st.integers(0, 20),
        tool_calls=st.integers(0, 20),
        tokens=st.integers(0, 20_000),
        cost=st.integers(0, 50_000_000),
    )


def usages() -> SearchStrategy[Usage]:
    """Token usage of one model call (never negative), now and then with its cache and reasoning breakdowns
    (each within its total)."""

    @st.composite
    def build(draw: st.DrawFn) -> Usage:
        inputs, outputs = draw(st.integers(0, 800)), draw(st.integers(0, 400))
        if draw(st.integers(0, 3)) != 3:
            return Usage(input_tokens=inputs, output_tokens=outputs)
        read = draw(st.integers(0, inputs))
        return Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            cache_read_tokens=read,
            cache_write_tokens=draw(st.integers(0, inputs - read)),
            reasoning_tokens=draw(st.integers(0, outputs)),
        )

    return build()


OPAQUE_DATA = ('{"type":"thinking","thinking":"hm","signature":"c2ln"}', '{"type":"redacted_thinking","data":"ZA=="}')
"""Opaque item data the strategies draw (JSON as a provider would send it)."""


def opaque_items() -> SearchStrategy[tuple[ProviderItem, ...]]:
    """Zero to two opaque provider items (``thinking`` / ``redacted-thinking`` of a made-up model)."""
    item = st.builds(
        ProviderItem,
        kind=st.sampled_from(("thinking", "redacted-thinking")),
        provider=st.just("anthropic"),
        model=st.just("claude-test"),
        data=st.sampled_from(OPAQUE_DATA),
    )
    return st.lists(item, max_size=2).map(tuple)


def tool_call_requests(names: SearchStrategy[str] | None = None) -> SearchStrategy[ToolCallRequest]:
    """A requested call: a tool name (registered or not) and JSON arguments."""
    return st.builds(
        ToolCallRequest,
        name=field(names, st.sampled_from(TOOL_NAMES) | ids()),
        parameters=st.sampled_from(PARAMETERS),
    )


def observations() -> SearchStrategy[Observation]:
    """``complete-re-act``, or ``continue-re-act`` with one to three calls (parallel calls)."""
    batch = st.dictionaries(ids(), tool_call_requests(), min_size=1, max_size=3)
    return st.one_of(st.just(CompleteReAct()), st.builds(ContinueReAct, tool_calls=batch))


def tool_results() -> SearchStrategy[ToolResult]:
    """A tool call's success or failure."""
    failures = st.builds(ToolFailure, error=texts(), code=st.sampled_from(FAILURE_CODES))
    return st.one_of(st.builds(ToolSuccess, content=texts()), failures)


INPUT_OBJECTS = (
    '{"q":{"method":"elicitation/create","params":{"message":"Which account?","requestedSchema":{"type":"object"}}}}',
    '{"q":{"action":"accept","content":{"account":"main"}}}',
    '{"a":{"action":"decline"}}',
)
"""JSON objects of questions and answers the strategies draw from (MCP's shapes; the reducer keeps them as text)."""


def input_objects() -> SearchStrategy[str]:
    """A non-empty JSON object of a tool's questions or a person's answers, as text."""
    return st.sampled_from(INPUT_OBJECTS)
