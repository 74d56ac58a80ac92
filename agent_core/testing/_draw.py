"""Small drawing helpers shared by the state-aware strategies: times, fresh ids, picks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from hypothesis import strategies as st

from .._inputs import WorkflowActionTaken
from .._reducer import check
from .._state import AgentState, ToolCallRecord, Turn, running_deadline
from ._values import ids

T = TypeVar("T")


def due_at(turn: Turn, calls: Mapping[str, ToolCallRecord] | None = None) -> int | None:
    """The earliest time a ``timer-fired`` is due in ``turn`` (a retry's backoff or a running deadline), if any;
    with the state's ``calls``, the backoffs of its tool calls count too."""
    times = [at for at in (turn.retry_at, running_deadline(turn)) if at is not None]
    if calls is not None:
        times += [at for i in turn.open_call_ids if (at := calls[i].retry_at) is not None]
    return min(times) if times else None


def pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of ``options`` (shrinks towards the first)."""
    return options[draw(st.integers(0, len(options) - 1))]


def later(draw: st.DrawFn, state: AgentState) -> int:
    """A timestamp at or after the state's: often the same millisecond, sometimes a long jump."""
    return state.timestamp + draw(_DELAYS)


def fresh_id(draw: st.DrawFn, state: AgentState, prefix: str, taken: Callable[[str], bool]) -> str:
    """A drawn id that ``taken`` does not know, else ``<prefix><step>`` with primes until free.

    The prefixes are outside the alphabet of :func:`ids`, so fallbacks never collide with drawn ids.
    """
    candidate = draw(_IDS)
    if not taken(candidate):
        return candidate
    candidate = f"{prefix}{state.step}"
    while taken(candidate):
        candidate += "'"
    return candidate


def message_taken(state: AgentState) -> Callable[[str], bool]:
    """Whether a message id is used in ``state`` (queued messages included)."""
    queued = {message.id for message in state.queued}
    return lambda message_id: message_id in state.message_index or message_id in queued


def recent_calls(state: AgentState, count: int = 8) -> list[str]:
    """The ids of the last ``count`` tool calls requested in the session."""
    log = state.tool_call_log
    return [log[i] for i in range(max(0, len(log) - count), len(log))]


_DELAYS = st.one_of(st.just(0), st.integers(1, 50), st.integers(51, 90_000))
_IDS = ids()


def actions_now(state: AgentState, at: int) -> list[str]:
    """The workflow actions an input at time ``at`` may take now: those the state accepts (a transition
    from the current workflow state whose guard passes; a guard that raises refuses), sorted."""
    workflow = state.config.workflow
    if workflow is None:
        return []
    here = state.workflow_state
    found = {t.action for t in workflow.transitions if t.action and t.source == here}
    return sorted(a for a in found if check(state, WorkflowActionTaken(timestamp=at, action=a)) is None)
