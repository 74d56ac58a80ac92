"""Session configuration carried by ``session-started``: the agent's settings and its tools."""

from __future__ import annotations

from typing import Literal

import msgspec

from ._compaction._policy import CompactionPolicy
from ._workflow import Workflow

BudgetPolicy = Literal["fail", "final-answer"]

DEFAULT_MAX_TURN_MS = 1_800_000
"""A turn that has run for 30 minutes (not counting time it only waited for a person's approval) ends with
outcome ``failed``, reason ``timeout``; ``AgentConfig(max_turn_ms=None)`` turns the deadline off."""
DEFAULT_STUCK_WINDOW = 6
"""Stuck detection looks for a cycle of calls (``A, B, A, B``) among a turn's last 6 tool calls;
``AgentConfig(stuck_window=0)`` turns the cycle rule off."""

MAX_STUCK_WINDOW = 100
"""The largest ``stuck_window`` a session accepts (the cycle rule's cost per call grows with its square)."""

UserMessagePolicy = Literal["merge", "queue", "interrupt"]

EMPTY_OBJECT_SCHEMA = '{"type":"object","properties":{}}'


class Lineage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where a child session sits in a tree of agents: the session whose tool call started it
    (``parent_session_id``, ``parent_tool_call_id``) and the session at the top of the tree
    (``root_session_id``; the parent's own id for a child of a top-level session). ``depth`` is how far
    below the root it is: 1 for a child of a top-level session, 2 for a grandchild..."""

    parent_session_id: str
    parent_tool_call_id: str
    root_session_id: str
    depth: int = 1


class AgentProfile(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Another agent of the session, one a handoff can give the conversation to (see ``AgentConfig.agents``).

    While it is the session's active agent, model calls send its ``system_prompt``
    and offer its ``tools`` and a ``transfer_to_<name>`` tool for each name in its
    ``handoffs``. ``model`` names its model for people reading the log (the model
    itself is the runner's). ``description`` is what its transfer tool tells the
    model that may hand over to it.
    """

    name: str
    description: str = ""
    system_prompt: str = ""
    tools: tuple[ToolDefinition, ...] = ()
    handoffs: tuple[str, ...] = ()
    model: str = ""


class AgentConfig(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How an agent behaves; fixed for a session by its ``session-started`` input.

    Budgets (``max_*``) count per turn and are off when ``None``. ``max_turn_ms``
    bounds a turn's running time (default :data:`DEFAULT_MAX_TURN_MS`, 30 minutes);
    time the turn spends only waiting for a person's approval does not count. When one is
    spent, ``on_budget_exhausted`` decides: ``"fail"`` ends the turn with
    outcome ``failed``; ``"final-answer"`` derives exactly one more model call
    with tools disabled, and the turn ends after it.

    ``workflow`` (optional) fixes what the agent may do in each workflow
    state; ``rules`` names the registered rules every proposed tool call is
    judged by, in order (see :func:`register_rule`).

    ``output_schema`` (a JSON Schema of an object, as a JSON *string*; empty:
    free text) asks every turn for a structured answer: the model is asked for
    it natively where the provider can, and an answer that does not validate is
    shown to the model with what was wrong and retried up to
    ``max_output_retries`` times before the turn fails with reason
    ``invalid-output``. The validated answer is ``last_outcome.output``.

    Stuck detection compares calls on their tool and canonical arguments
    (:func:`canonical_arguments`): the turn fails with ``stuck`` when the same
    call is asked ``max_identical_tool_calls`` times, or when the last calls
    repeat a cycle of two or more calls twice in a row within the turn's last
    ``stuck_window`` calls (0: no cycle rule; else at least 4, the shortest cycle twice).

    Money (in nano-units, see :func:`nanos`): ``max_cost`` bounds what a turn's
    model calls cost, ``max_session_cost`` what the session's do, all turns
    together; both are checked before each model call, like ``max_tokens``, and a
    call the pricing could not price ends the turn (reason ``unpriced``) while
    either is set. ``budget_pool`` names a pool shared by sessions (e.g.
    ``"acme:2026-11-27"``): each model call reserves from it before it starts
    (see ``effects.BudgetPool``).

    ``lineage`` is set on a child session, one a tool call of another session
    started (see ``effects.Agent.as_tool``); ``None`` for a session of its own.
    It is part of the config so that a log that has none encodes as before.

    ``compaction`` (optional) says when the context is compacted and how
    (:class:`CompactionPolicy`); without it the message window alone bounds the context.

    Handoffs: ``agent_name`` names the agent the session starts with (its tools
    are the session's ``tools``, its instructions ``system_prompt``),
    ``handoffs`` the agents it may hand the conversation to, and ``agents`` every
    other agent a handoff can reach (:class:`AgentProfile`). A ``handed-off``
    input makes another agent the active one (``state.agent``).
    """

    system_prompt: str = ""
    initial_context_window: int = 10
    context_window_step: int = 10
    max_model_calls: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_turn_ms: int | None = DEFAULT_MAX_TURN_MS
    on_budget_exhausted: BudgetPolicy = "fail"
    max_identical_tool_calls: int = 3
    llm_max_attempts: int = 3
    retry_base_ms: int = 1000
    retry_max_ms: int = 30000
    user_message_policy: UserMessagePolicy = "merge"
    workflow: Workflow | None = None
    rules: tuple[str, ...] = ()
    output_schema: str = ""
    max_output_retries: int = 2
    stuck_window: int = DEFAULT_STUCK_WINDOW
    max_cost: int | None = None
    max_session_cost: int | None = None
    budget_pool: str = ""
    lineage: Lineage | None = None
    compaction: CompactionPolicy | None = None
    agent_name: str = ""
    handoffs: tuple[str, ...] = ()
    agents: tuple[AgentProfile, ...] = ()


DEFAULT_RETRY_ON = ("timeout", "ConnectionError", "TimeoutError")
"""The failures a :class:`ToolRetry` retries unless told otherwise: the call timed out, or the tool raised
``ConnectionError`` or ``TimeoutError`` (or a subclass)."""


class ToolRetry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How a tool's failed calls are tried again: data in ``session-started``, so a replay needs no code.

    A failed attempt whose failure ``code`` (see :class:`ToolFailure`) is in ``on``
    is tried again, with the same tool call id, after ``base_ms * 2**(failures-1)``
    milliseconds capped at ``max_ms`` (the backoff of model calls), until
    ``max_attempts`` attempts in all have run. A code is ``timeout`` for a call that
    ran out of time, else the name of the exception the tool raised as
    ``ExceptionName`` for a builtin and ``module.QualifiedName`` otherwise; an
    exception matches a name in ``on`` when it is an instance of that class.

    Only an ``idempotent`` tool retries: a policy on another tool is refused at
    session start unless ``force=True`` says running it twice is acceptable.
    Each attempt counts toward the turn's ``max_tool_calls``: with the budget
    spent, the failure is final. The turn's deadline runs through the backoff.
    """

    max_attempts: int = 3
    base_ms: int = 1000
    max_ms: int = 30000
    on: tuple[str, ...] = DEFAULT_RETRY_ON
    force: bool = False


class ToolDefinition(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An external tool the model may call.

    ``parameters`` is the JSON schema of the tool's arguments, as a JSON
    *string* (the wire format keeps it opaque so any producer can write it).
    ``idempotent`` says the tool is safe to run again after a crash;
    ``timeout_ms`` bounds one call (``None``: no bound); ``retry`` tries a failed
    call again (see :class:`ToolRetry`).
    """

    name: str
    description: str = ""
    parameters: str = EMPTY_OBJECT_SCHEMA
    requires_approval: bool = False
    idempotent: bool = False
    timeout_ms: int | None = None
    retry: ToolRetry | None = None
