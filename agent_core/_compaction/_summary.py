"""``summary_context``: the request of a summarization call, derived from the state like any model call's; and
``summary_problem``: what makes a summary unfit to stand for the context (checked where it enters and by the
reducer)."""

from __future__ import annotations

from .._context import SUMMARY_HEADER, ContextMessage, LlmContext, cleared_result
from .._inputs import ToolSuccess
from .._state import AgentState
from ._policy import CompactionPolicy
from ._tokens import text_tokens

_TOOL_CALL = "tool call {id} {name}({parameters}) -> {outcome}"


def summary_context(state: AgentState) -> LlmContext:
    """What the summarization the state asks for sends: the policy's prompt as the system prompt, and one user
    message holding the summary so far and the conversation it must now cover, oldest first. No tools.

    Raises ``ValueError`` when no summarization is asked for.
    """
    compaction, policy = state.compaction, state.config.compaction
    request = compaction.request if compaction is not None else None
    if compaction is None or policy is None or request is None:
        raise ValueError("no summarization is asked for in this state; expected one where effects_at derives it")
    parts = [f"Write a summary of at most {policy.summary_max_tokens} tokens."]
    if compaction.summary:
        parts.append(f"{SUMMARY_HEADER}\n{compaction.summary}")
    parts.append("[The conversation to summarize]")
    for line in _timeline(state, compaction.summarized_messages, request.messages, request.tool_call_ids):
        parts.append(line)
    return LlmContext(
        system_prompt=policy.summary_prompt,
        entries=(_user("\n\n".join(parts)),),
        tools=(),
        tools_enabled=False,
        task="summarize",
    )


def summary_problem(policy: CompactionPolicy, summary: str) -> str | None:
    """What is wrong with ``summary`` as the result of a summarization under ``policy``: empty, or longer than
    ``summary_max_tokens`` by :func:`context_tokens`' estimate (a longer one could fill the window it was asked
    to free); ``None`` when it fits."""
    if not summary.strip():
        return "expected a non-empty summary, got an empty one"
    tokens = text_tokens(summary)
    if tokens > policy.summary_max_tokens:
        return (
            f"the summary is about {tokens} tokens ({len(summary)} characters); expected at most the policy's "
            f"summary_max_tokens ({policy.summary_max_tokens})"
        )
    return None


def _user(text: str) -> ContextMessage:
    return ContextMessage(role="user", content=text)


def _timeline(state: AgentState, start: int, end: int, call_ids: tuple[str, ...]) -> list[str]:
    """The covered messages and calls as lines, ordered as ``llm_context`` orders them (by ``seq``, a
    batch after a message of the same ``seq``)."""
    compaction = state.compaction
    cleared = frozenset(compaction.cleared) if compaction is not None else frozenset()
    lines: list[tuple[int, int, str]] = []
    messages = state.messages
    for position in range(start, end):
        message = messages[position]
        if message.content:
            lines.append((message.seq, 0, f"{message.role}: {message.content}"))
    calls = state.tool_calls
    for call_id in call_ids:
        record = calls[call_id]
        result = record.result
        if call_id in cleared:
            outcome = cleared_result(call_id, record.name)
        elif isinstance(result, ToolSuccess):
            outcome = result.content
        elif result is not None:
            outcome = f"error: {result.error}"
        else:
            outcome = "(no result)"
        text = _TOOL_CALL.format(id=call_id, name=record.name, parameters=record.parameters, outcome=outcome)
        lines.append((record.seq, 1, text))
    lines.sort(key=lambda line: (line[0], line[1]))
    return [line[2] for line in lines]
