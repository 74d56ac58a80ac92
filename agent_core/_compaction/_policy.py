"""``CompactionPolicy``: when a session's context is compacted and how; user strategies registered by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import msgspec

from .._registry import register as register_named

if TYPE_CHECKING:
    from .._state import AgentState

SUMMARIZE = "summarize"
"""Strategy: a model call summarizes the older part of the context; the summary replaces it."""

CLEAR_TOOL_RESULTS = "clear-tool-results"
"""Strategy: older tool results are replaced by a placeholder naming the call (the internal tool loads it back)."""

PROVIDER = "provider"
"""Strategy: the provider compacts on its side (OpenAI Responses' ``context_management``); its items are logged."""

BUILT_IN_STRATEGIES = (SUMMARIZE, CLEAR_TOOL_RESULTS, PROVIDER)
"""The strategies the library ships; any other name must be registered (:func:`register_compaction_strategy`)."""

DEFAULT_SUMMARY_PROMPT = (
    "You compact the context of a long agent session. Summarize the conversation below so that the agent can go "
    "on without it: the user's goals and constraints, decisions taken, facts and numbers learned (from tool results "
    "too), open questions and what was about to be done next. Keep tool call ids the agent may want to load again. "
    "Write only the summary."
)
"""The system prompt of a summarization call unless the policy gives its own."""


class CompactionPolicy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """When a session's context is compacted, and how (``AgentConfig.compaction``; ``None``: never).

    When: before a model call, if the last call's reported input tokens, or the
    estimate of what the next one would send (:func:`~agent_core.context_tokens`),
    reach ``trigger_percent`` of ``context_window_tokens`` (the model's context
    window, as the user declares it), or the context holds more than
    ``max_messages`` entries (``None``: no count trigger).

    How (``strategy``):

    * ``"summarize"``: a model call (``summary_prompt``, asked for at most
      ``summary_max_tokens``) summarizes the context's older part, keeping the
      newest ``keep_recent_percent`` of the window verbatim; its result enters
      as ``context-compacted`` and ``llm_context`` sends the summary in place
      of what it covers. The message window no longer cuts the conversation:
      everything after the summary is sent.
    * ``"clear-tool-results"``: older tool results of the turn are replaced in
      the context by a placeholder naming the call and the internal tool that
      loads it back, until the newest ``keep_recent_percent`` fit.
    * ``"provider"``: the provider compacts (the threshold rides on the
      request; OpenAI Responses sends ``context_management``).
    * any other name: a strategy registered with
      :func:`register_compaction_strategy`, which picks the tool results to clear.
    """

    context_window_tokens: int
    strategy: str = SUMMARIZE
    trigger_percent: int = 80
    max_messages: int | None = None
    keep_recent_percent: int = 25
    summary_prompt: str = DEFAULT_SUMMARY_PROMPT
    summary_max_tokens: int = 2000

    @property
    def trigger_tokens(self) -> int:
        """The token count at which compaction fires."""
        return self.context_window_tokens * self.trigger_percent // 100

    @property
    def keep_tokens(self) -> int:
        """How many tokens of the newest context are kept verbatim."""
        return self.context_window_tokens * self.keep_recent_percent // 100


CompactionStrategy = Callable[["AgentState", CompactionPolicy], Iterable[str]]
"""A user strategy: given the state and the policy, the ids of the turn's tool calls whose results to clear.

Pure and deterministic (it runs in the reducer, so it replays). Ids that are
not calls of the open turn's context are ignored.
"""

_STRATEGIES: dict[str, CompactionStrategy] = {}


def register_compaction_strategy(name: str) -> Callable[[CompactionStrategy], CompactionStrategy]:
    """Decorator: register a pure compaction strategy under ``name`` for a :class:`CompactionPolicy` to name.

    Raises ``ValueError`` for an empty name, a built-in one, or one another function already holds.
    """

    def register(fn: CompactionStrategy) -> CompactionStrategy:
        if not name or name in BUILT_IN_STRATEGIES:
            raise ValueError(
                f"expected a non-empty strategy name other than {', '.join(BUILT_IN_STRATEGIES)}, got {name!r}"
            )
        registered: CompactionStrategy = register_named(_STRATEGIES, "compaction strategy", name, fn)
        return registered

    return register


def known_compaction_strategies() -> tuple[str, ...]:
    """The built-in strategies, then the registered ones, sorted."""
    return (*BUILT_IN_STRATEGIES, *sorted(_STRATEGIES))


def registered_strategy(name: str) -> CompactionStrategy | None:
    """The user strategy registered under ``name``, if any."""
    return _STRATEGIES.get(name)


def policy_problems(policy: CompactionPolicy, max_count: int) -> list[str]:
    """What is wrong with ``policy``, each as "expected ..., got ..." (empty when it makes sense)."""
    problems: list[str] = []
    window = policy.context_window_tokens
    if not 1 <= window <= max_count:
        problems.append(f"expected compaction.context_window_tokens of 1 or more, got {window}")
    if not 1 <= policy.trigger_percent <= 100:
        problems.append(f"expected compaction.trigger_percent from 1 to 100, got {policy.trigger_percent}")
    if not 0 <= policy.keep_recent_percent < policy.trigger_percent:
        problems.append(
            f"expected compaction.keep_recent_percent from 0 to below trigger_percent ({policy.trigger_percent}), "
            f"got {policy.keep_recent_percent}"
        )
    if policy.max_messages is not None and not 2 <= policy.max_messages <= max_count:
        problems.append(f"expected compaction.max_messages of 2 or more or None, got {policy.max_messages}")
    if policy.strategy not in BUILT_IN_STRATEGIES and policy.strategy not in _STRATEGIES:
        problems.append(
            f"compaction strategy {policy.strategy!r} is not registered; expected one of: "
            f"{', '.join(known_compaction_strategies())} (register_compaction_strategy(), imported before the "
            "session starts or resumes)"
        )
    if policy.strategy == SUMMARIZE:
        if not policy.summary_prompt.strip():
            problems.append("expected a non-empty compaction.summary_prompt for strategy 'summarize'")
        room = max(1, policy.trigger_tokens - policy.keep_tokens)
        if not 1 <= policy.summary_max_tokens < room:
            problems.append(
                f"expected compaction.summary_max_tokens from 1 to below {room} (the trigger's tokens less those "
                f"kept), got {policy.summary_max_tokens}: a summary that long would fire compaction again"
            )
    return problems
