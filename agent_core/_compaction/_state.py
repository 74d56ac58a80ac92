"""``ContextCompaction``: what the state records of a session's compaction (only under a compaction policy)."""

from __future__ import annotations

import msgspec


class SummaryRequest(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """A summarization the state asks for: it covers ``messages[:messages]`` and the turn's calls ``tool_call_ids``.

    ``attempt`` counts its failed attempts (retried like a model call).
    """

    messages: int
    tool_call_ids: tuple[str, ...] = ()
    attempt: int = 0


class ContextCompaction(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """Where a session's compaction stands (``AgentState.compaction``; ``None`` without a policy).

    * ``last_input_tokens``: the input tokens the last model call reported (0
      after a compaction, until the next call reports).
    * ``summary``: the newest summary; it covers ``messages[:summarized_messages]``
      and ``summarized_calls`` tool calls in all (each summary summarizes the one before it too).
    * ``request``: the summarization being asked for, if any.
    * ``cleared``: ids of tool calls whose results the context shows as a placeholder; ``restored``: those
      the model loaded back with the internal tool (never cleared again).
    * ``gave_up_turn``: the turn in which summarization failed for good (none
      is asked again in it); ``forced_turn``: the turn in which a provider's
      context-length error forced a compaction (a second one fails the turn).
    * ``summary_input_tokens`` / ``summary_output_tokens``: what the summarization calls used.
    """

    last_input_tokens: int = 0
    summary: str = ""
    summarized_messages: int = 0
    summarized_calls: int = 0
    summaries: int = 0
    request: SummaryRequest | None = None
    cleared: tuple[str, ...] = ()
    gave_up_turn: int = 0
    forced_turn: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    restored: tuple[str, ...] = ()
