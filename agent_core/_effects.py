"""Effects: imperative requests derived from the state. The runner starts and cancels them by key."""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._state import AgentState, running_deadline


class CallLlm(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="call-llm"):
    """Ask the model for the next step of turn ``turn``; the request is ``llm_context(state)``.

    ``tools_enabled`` is false for the final answer after a budget is spent.
    ``task`` is ``"summarize"`` for a summarization of the context (its request is
    ``summary_context(state)``, its result a ``context-compacted`` input).
    """

    turn: int
    context_rev: int
    attempt: int = 0
    tools_enabled: bool = True
    task: Literal["answer", "summarize"] = "answer"


class CallTool(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="call-tool"):
    """Run one external tool call (``tool-call-started`` is dispatched first)."""

    tool_call_id: str
    name: str
    parameters: str


class WaitUntil(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="wait-until"):
    """Dispatch ``timer-fired`` at ``at`` (ms since the epoch): a retry backoff's end or the turn's deadline."""

    at: int
    reason: Literal["retry", "deadline"]


Effect = Union[CallLlm, CallTool, WaitUntil]
"""An effect the state asks for: :class:`CallLlm`, :class:`CallTool` or :class:`WaitUntil` (tag ``type``)."""


ROUND = "#"
"""Between a tool call's id and its answered round in the key of an attempt after a person's answers."""


def call_tool_key(tool_call_id: str, rounds: int = 0) -> str:
    """The key of a ``call-tool`` effect: ``call-tool:<id>``, and ``call-tool:<id>#<n>`` for the attempt that
    follows the answers to its ``n``-th question (a new attempt, so a new key: a key once gone never returns)."""
    return f"call-tool:{tool_call_id}{ROUND}{rounds}" if rounds else "call-tool:" + tool_call_id


def tool_call_id_of(key: str) -> str:
    """The tool call id in a ``call-tool`` key (see :func:`call_tool_key`)."""
    call_id = key.removeprefix("call-tool:")
    head, separator, rounds = call_id.rpartition(ROUND)
    return head if separator and rounds.isdigit() else call_id


def effects_at(state: AgentState) -> dict[str, Effect]:
    """The effects that should be running in ``state``, keyed by stable keys.

    Keys begin with the effect's tag and a colon. ``call-tool:<id>`` for each
    pending or running call (``call-tool:<id>#<n>`` for its ``n``-th attempt after the first: after a
    person's answers, or a retry), but a call backing off before another attempt, whose
    ``wait-until:retry:<turn>:<at>`` runs instead; ``call-llm:<turn>:<context_rev>:<attempt>`` while
    the model should be asked (the key changes exactly when what the call
    would send changes, or on a retry), ``call-llm:summary:<turn>:<n>:<attempt>`` instead while the
    ``n``-th summarization of the context is asked for; ``wait-until:<reason>:<turn>:<at>``
    for a retry backoff and for the turn's deadline (none while the turn only
    waits for a person's approval: that time does not count). Cost: O(open calls).
    """
    turn = state.turn
    if turn is None:
        return {}
    effects: dict[str, Effect] = {}
    deadline = running_deadline(turn)
    if deadline is not None:
        effects[f"wait-until:deadline:{turn.number}:{deadline}"] = WaitUntil(at=deadline, reason="deadline")
    if turn.retry_at is not None:
        effects[f"wait-until:retry:{turn.number}:{turn.retry_at}"] = WaitUntil(at=turn.retry_at, reason="retry")
        return effects
    if turn.open_call_ids:
        calls = state.tool_calls
        for call_id in turn.open_call_ids:
            record = calls[call_id]
            if record.retry_at is not None:  # backing off before another attempt
                effects[f"wait-until:retry:{turn.number}:{record.retry_at}"] = WaitUntil(
                    at=record.retry_at, reason="retry"
                )
                continue
            # Each retry and each answered question starts a new attempt, so a new key (never one that was gone).
            effects[call_tool_key(call_id, record.input_rounds + record.attempt)] = CallTool(
                tool_call_id=call_id, name=record.name, parameters=record.parameters
            )
        return effects
    if turn.awaiting_ids:
        return effects
    compaction = state.compaction
    if compaction is not None and compaction.request is not None:
        request = compaction.request
        key = f"call-llm:summary:{turn.number}:{compaction.summaries + 1}:{request.attempt}"
        effects[key] = CallLlm(
            turn=turn.number,
            context_rev=turn.context_rev,
            attempt=request.attempt,
            tools_enabled=False,
            task="summarize",
        )
        return effects
    effects[f"call-llm:{turn.number}:{turn.context_rev}:{turn.attempt}"] = CallLlm(
        turn=turn.number, context_rev=turn.context_rev, attempt=turn.attempt, tools_enabled=not turn.final_answer
    )
    return effects
