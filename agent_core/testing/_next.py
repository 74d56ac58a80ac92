"""Inputs a given state accepts, drawn from what the state is waiting for.

The generators read the state the way a runner would: the phase, the open and
awaiting tool calls, the streaming message, the timers that are due. They
follow the design's semantics independently of the reducer's guards, so an
input drawn here that the reducer refuses is a bug in one of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._inputs import (
    AgentInput,
    CompleteReAct,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActCancelled,
    ReActObserved,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallRequest,
    ToolCallStarted,
    UserMessageReceived,
)
from .._phase import Phase, phase
from .._state import AgentState, Turn
from ._kinds import session_started
from ._values import EPOCH_MS, PARAMETERS, ids, texts, tool_results, usages

T = TypeVar("T")

# How often each kind is drawn among those possible, most progress first (shrinking
# prefers the front of the list): a session mostly moves forward, now and then it
# is cancelled, interrupted or times out.
_WEIGHTS = (
    ("re-act-observed", 6),
    ("tool-call-completed", 5),
    ("llm-message-completed", 4),
    ("tool-call-started", 6),
    ("tool-call-approved", 3),
    ("user-message-received", 2),
    ("llm-message-started", 2),
    ("session-started", 1),
    ("tool-call-denied", 1),
    ("llm-call-failed", 1),
    ("context-window-expanded", 1),
    ("history-tool-calls-added", 1),
    ("timer-fired", 1),
    ("re-act-cancelled", 1),
)


def next_input_kinds(state: AgentState) -> tuple[str, ...]:
    """The input tags :func:`next_input` can draw for ``state``: valid in its phase *and* with
    something to act on (``tool-call-started`` needs a pending call, ``timer-fired`` a timer...)."""
    turn = state.turn
    if not state.started:
        return ("session-started",)
    kinds = {"user-message-received"}
    if turn is None:
        return tuple(kinds)
    kinds.add("re-act-cancelled")
    if due_at(turn) is not None:
        kinds.add("timer-fired")
    current = phase(state)
    if current is Phase.THINKING:
        kinds.add("llm-call-failed")
        if turn.streaming_message_id:
            kinds.add("llm-message-completed")
        else:
            kinds.update(("llm-message-started", "re-act-observed", "context-window-expanded"))
            kinds.add("history-tool-calls-added")
    if current is Phase.ACTING:
        kinds.add("tool-call-completed")
        if any(state.tool_calls[i].status == "pending" for i in turn.open_call_ids):
            kinds.add("tool-call-started")
    if turn.awaiting_ids and current in (Phase.ACTING, Phase.AWAITING_APPROVAL):
        kinds.update(("tool-call-approved", "tool-call-denied"))
    return tuple(sorted(kinds))


def due_at(turn: Turn) -> int | None:
    """The earliest time a ``timer-fired`` is due in ``turn`` (retry backoff or deadline), if any."""
    times = [at for at in (turn.retry_at, turn.deadline) if at is not None]
    return min(times) if times else None


def next_input(state: AgentState, *, kind: str | None = None) -> SearchStrategy[AgentInput]:
    """Inputs that ``state`` accepts, drawn from what it waits for.

    ``kind`` (a tag from :func:`next_input_kinds`) fixes the input kind; by
    default one is drawn, weighted towards progress. Timestamps repeat the
    state's millisecond often and jump ahead now and then (so deadlines pass).
    """
    kinds = next_input_kinds(state)
    if kind is not None and kind not in kinds:
        raise ValueError(f"cannot draw a {kind!r} input in this state; expected one of: {', '.join(kinds)}")
    return _next_inputs(state, kind)


@st.composite
def _next_inputs(draw: st.DrawFn, state: AgentState, kind: str | None) -> AgentInput:
    return draw_next(draw, state, kind)


def draw_next(draw: st.DrawFn, state: AgentState, kind: str | None = None) -> AgentInput:
    """Draw one input ``state`` accepts (see :func:`next_input`) inside a composite strategy.

    Drawing values directly, rather than building a strategy per state, keeps
    long sessions cheap to generate.
    """
    if kind is None:
        kinds = next_input_kinds(state)
        # While a retry backoff runs, its timer is what usually comes next.
        boost = {"timer-fired": 5} if phase(state) is Phase.RETRYING else {}
        weighted = [tag for tag, weight in _WEIGHTS if tag in kinds for _ in range(boost.get(tag, weight))]
        kind = pick(draw, weighted)
    return _BUILDERS[kind](draw, state)


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


def _user_message(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    message_id = fresh_id(draw, state, "m", message_taken(state))
    return UserMessageReceived(timestamp=at, message_id=message_id, content=draw(_TEXTS))


def _message_started(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    return LlmMessageStarted(timestamp=at, message_id=fresh_id(draw, state, "m", message_taken(state)))


def _message_completed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    at = later(draw, state)
    return LlmMessageCompleted(timestamp=at, message_id=state.turn.streaming_message_id, content=draw(_TEXTS))


def _observed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    called = at - draw(st.integers(0, min(at, 30_000)))
    usage = draw(_USAGES)
    if draw(st.integers(0, 4)) == 4:
        return ReActObserved(timestamp=at, called_llm_at=called, observation=CompleteReAct(), usage=usage)
    requests: dict[str, ToolCallRequest] = {}
    for _ in range(draw(st.integers(1, 3))):
        call_id = fresh_id(draw, state, "t", lambda i: i in state.tool_calls or i in requests)
        # Mostly registered tools, now and then a name the session does not know.
        unknown = not state.tools or draw(st.integers(0, 7)) == 7
        name = "no_such_tool" if unknown else pick(draw, list(state.tools))
        requests[call_id] = ToolCallRequest(name=name, parameters=pick(draw, PARAMETERS))
    return ReActObserved(
        timestamp=at, called_llm_at=called, observation=ContinueReAct(tool_calls=requests), usage=usage
    )


def _failed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return LlmCallFailed(
        timestamp=later(draw, state),
        error=draw(_TEXTS),
        retryable=draw(st.booleans()),
        retry_after_ms=draw(_RETRY_AFTER),
    )


def _open_id(draw: st.DrawFn, state: AgentState, status: str | None = None) -> str:
    assert state.turn is not None
    calls = state.tool_calls
    return pick(draw, [i for i in state.turn.open_call_ids if status is None or calls[i].status == status])


def _started(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ToolCallStarted(timestamp=later(draw, state), tool_call_id=_open_id(draw, state, "pending"))


def _completed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    return ToolCallCompleted(timestamp=at, tool_call_id=_open_id(draw, state), result=draw(_RESULTS))


def _approved(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    return ToolCallApproved(timestamp=later(draw, state), tool_call_id=pick(draw, state.turn.awaiting_ids))


def _denied(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    at = later(draw, state)
    return ToolCallDenied(timestamp=at, tool_call_id=pick(draw, state.turn.awaiting_ids), reason=draw(_TEXTS))


def _expanded(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ContextWindowExpanded(timestamp=later(draw, state))


def _history(draw: st.DrawFn, state: AgentState) -> AgentInput:
    # Recent calls of the session (any turn), with repeats; the empty request is valid too.
    at = later(draw, state)
    recent = recent_calls(state)
    chosen = tuple(pick(draw, recent) for _ in range(draw(st.integers(0, 4)))) if recent else ()
    return HistoryToolCallsAdded(timestamp=at, tool_call_ids=chosen)


def _timer(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    due = due_at(state.turn)
    assert due is not None
    # A timer at exactly its time is due; the runner may also fire it a little late.
    return TimerFired(timestamp=max(state.timestamp, due) + draw(st.one_of(st.just(0), st.integers(1, 1_000))))


def _cancelled(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ReActCancelled(timestamp=later(draw, state), reason=draw(_TEXTS))


def _session(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return draw(session_started(timestamp=st.integers(EPOCH_MS, EPOCH_MS + 10**9)))


_DELAYS = st.one_of(st.just(0), st.integers(1, 50), st.integers(51, 90_000))
_IDS = ids()
_TEXTS = texts()
_USAGES = usages()
_RESULTS = tool_results()
_RETRY_AFTER = st.none() | st.integers(0, 60_000)

_BUILDERS: dict[str, Callable[[st.DrawFn, AgentState], AgentInput]] = {
    "session-started": _session,
    "user-message-received": _user_message,
    "llm-message-started": _message_started,
    "llm-message-completed": _message_completed,
    "re-act-observed": _observed,
    "llm-call-failed": _failed,
    "tool-call-started": _started,
    "tool-call-completed": _completed,
    "tool-call-approved": _approved,
    "tool-call-denied": _denied,
    "context-window-expanded": _expanded,
    "history-tool-calls-added": _history,
    "timer-fired": _timer,
    "re-act-cancelled": _cancelled,
}
