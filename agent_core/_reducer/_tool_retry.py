"""Tool retries as state: a failed attempt of a tool with a :class:`~agent_core.ToolRetry` backs off and runs again.

A retried call stays open and ``pending`` with ``retry_at`` set: ``effects_at``
derives a ``wait-until`` (reason ``retry``) instead of its ``call-tool``; the
``timer-fired`` that ends the backoff clears ``retry_at``, and the call runs
again, with the same tool call id, from ``tool-call-started``, under a new effect key
(``call-tool:<id>#<n>``: a key once gone never returns). The log holds
every attempt: its failure, the timer, the new start. The decision reads only
the log's data (the policy in ``session-started``, the failure's ``code``), so
a replay decides the same.
"""

from __future__ import annotations

from msgspec.structs import replace

from .._handoff import active_tools
from .._inputs import ToolFailure
from .._state import AgentState, ToolCallRecord
from ._backoff import backoff_ms
from ._turns import spent_by_turn


def retried(state: AgentState, record: ToolCallRecord, result: ToolFailure, now: int) -> ToolCallRecord | str:
    """The call's record backing off for another attempt, or why ``result``, received at ``now``, is final
    (``""``: nothing to add to it; else a note for the model)."""
    tool = active_tools(state).get(record.name)
    policy = tool.retry if tool is not None else None
    if policy is None or not (tool is not None and (tool.idempotent or policy.force)):
        return ""
    failures = record.attempt + 1
    if result.code not in policy.on:
        return f"failed {failures} attempts; this failure is not retried" if record.attempt else ""
    if failures >= policy.max_attempts:
        return f"failed {failures} of {policy.max_attempts} attempts" if failures > 1 else ""
    turn = state.turn
    limit = state.config.max_tool_calls
    if turn is not None and limit is not None and spent_by_turn(turn).tool_calls >= limit:
        return f"failed {failures} attempts; not retried: the turn's budget of {limit} tool calls is spent"
    at = now + backoff_ms(policy.base_ms, policy.max_ms, failures)
    # A new attempt starts the call over: not the remote task or the answers of the failed one.
    return replace(
        record,
        status="pending",
        attempt=failures,
        retry_at=at,
        last_error=result.error,
        task_id="",
        input_responses="",
        request_state="",
    )


def with_note(result: ToolFailure, note: str) -> ToolFailure:
    """``result`` with ``note`` after its error text, for the model to read."""
    return replace(result, error=f"{result.error} ({note})") if note else result
