"""Inputs a given state must refuse: the mistakes producers make, aimed at the state's weak spots."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from msgspec.structs import replace

from .._inputs import (
    INPUT_TAGS,
    SCHEMA_VERSION,
    AgentInput,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActObserved,
    SessionStarted,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallInputProvided,
    ToolCallInputRequired,
    ToolCallRequest,
    ToolCallStarted,
    ToolCallTaskCreated,
    Usage,
    UserMessageReceived,
)
from .._phase import Phase, phase
from .._reducer import valid_inputs
from .._state import AgentState
from ._draw import due_at, fresh_id, later, message_taken, pick, recent_calls
from ._kinds import BY_TAG, session_started
from ._values import ids, input_objects, observations, texts, tool_definitions, tool_results

Mistake = Callable[[st.DrawFn, AgentState], AgentInput]
_CALL_INPUTS: tuple[Callable[..., AgentInput], ...] = (ToolCallStarted, ToolCallApproved, ToolCallDenied)


def invalid_input(state: AgentState) -> SearchStrategy[AgentInput]:
    """Inputs ``state`` must refuse: time going backwards, a kind its phase does not accept,
    unknown or duplicate ids, completing or deciding a finished call, approving a call that
    needs no approval, a second ``session-started``, empty ids, a timer that is not due, a model reply
    while a message still streams, a reply observed before it was called, negative token usage."""
    return _invalid_inputs(state)


@st.composite
def _invalid_inputs(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return draw_invalid(draw, state)


def draw_invalid(draw: st.DrawFn, state: AgentState) -> AgentInput:
    """Draw one input ``state`` must refuse (see :func:`invalid_input`) inside a composite strategy."""
    return pick(draw, mistakes(state))(draw, state)


def mistakes(state: AgentState) -> list[Mistake]:
    """The kinds of mistake that apply to ``state``; each draws an input the state must refuse."""
    found: list[Mistake] = [_wrong_phase, _unknown_call]
    if state.timestamp > 0:
        found.append(_backwards)
    found.append(_bad_session if not state.started else _second_session)
    if state.started:
        found.append(_empty_id)
    if state.message_index:
        found.append(_duplicate_message)
    calls = [state.tool_calls[i] for i in recent_calls(state)]
    if any(call.status != "awaiting-approval" for call in calls):
        found.append(_decide_undecidable)
    if any(call.status == "completed" for call in calls):
        found.append(_finish_finished)
    if any(call.status != "awaiting-input" for call in calls):
        found.append(_answer_unasked)
    if any(call.status != "running" for call in calls):
        found.append(_report_on_idle_call)
    turn = state.turn
    if turn is not None:
        due = due_at(turn, state.tool_calls)
        if due is None or due > state.timestamp:
            found.append(_timer_not_due)
    if phase(state) is Phase.THINKING:
        assert turn is not None
        if turn.streaming_message_id:
            found.append(_while_streaming)
        else:
            found += [_nothing_streams, _empty_continue, _observed_before_called, _negative_usage]
            if state.tool_calls:
                found.append(_duplicate_call_id)
    return found


def _wrong_phase(draw: st.DrawFn, state: AgentState) -> AgentInput:
    tag = pick(draw, [tag for tag in INPUT_TAGS if tag not in valid_inputs(state)])
    return replace(draw(_ANY[tag]), timestamp=later(draw, state))


def _unknown_call(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    call_id = fresh_id(draw, state, "u", state.tool_calls.__contains__)
    if draw(st.booleans()):
        return ToolCallCompleted(timestamp=at, tool_call_id=call_id, result=draw(_RESULTS))
    return pick(draw, _CALL_INPUTS)(timestamp=at, tool_call_id=call_id)


def _backwards(draw: st.DrawFn, state: AgentState) -> AgentInput:
    earlier = draw(st.integers(max(0, state.timestamp - 90_000), state.timestamp - 1))
    return replace(draw(_ANY[pick(draw, INPUT_TAGS)]), timestamp=earlier)


def _bad_session(draw: st.DrawFn, state: AgentState) -> AgentInput:
    started = replace(draw(_SESSION), timestamp=later(draw, state))
    problem = draw(st.integers(0, 2))
    if problem == 0:
        return SessionStarted(timestamp=started.timestamp, session_id="", config=started.config, tools=started.tools)
    if problem == 1:
        tool = draw(tool_definitions())
        return SessionStarted(timestamp=started.timestamp, session_id=started.session_id, tools=(tool, tool))
    version = draw(st.integers(0, 5).filter(lambda v: v != SCHEMA_VERSION))
    return SessionStarted(timestamp=started.timestamp, session_id=started.session_id, schema_version=version)


def _second_session(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return replace(draw(_SESSION), timestamp=later(draw, state))


def _empty_id(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    if phase(state) is Phase.THINKING and draw(st.booleans()):
        observation = ContinueReAct(tool_calls={"": ToolCallRequest(name="search")})
        return ReActObserved(timestamp=at, called_llm_at=at, observation=observation)
    return UserMessageReceived(timestamp=at, message_id="", content=draw(_TEXTS))


def _duplicate_message(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    used = state.messages[draw(st.integers(0, len(state.messages) - 1))].id
    if draw(st.booleans()):
        return UserMessageReceived(timestamp=at, message_id=used, content="again")
    return LlmMessageStarted(timestamp=at, message_id=used)


def _decide_undecidable(draw: st.DrawFn, state: AgentState) -> AgentInput:
    calls = [i for i in recent_calls(state) if state.tool_calls[i].status != "awaiting-approval"]
    call_id = pick(draw, calls)
    at = later(draw, state)
    if draw(st.booleans()):
        return ToolCallApproved(timestamp=at, tool_call_id=call_id)
    return ToolCallDenied(timestamp=at, tool_call_id=call_id, reason="no")


def _finish_finished(draw: st.DrawFn, state: AgentState) -> AgentInput:
    call_id = pick(draw, [i for i in recent_calls(state) if state.tool_calls[i].status == "completed"])
    at = later(draw, state)
    if draw(st.booleans()):
        return ToolCallStarted(timestamp=at, tool_call_id=call_id)
    return ToolCallCompleted(timestamp=at, tool_call_id=call_id, result=draw(_RESULTS))


def _answer_unasked(draw: st.DrawFn, state: AgentState) -> AgentInput:
    call_id = pick(draw, [i for i in recent_calls(state) if state.tool_calls[i].status != "awaiting-input"])
    return ToolCallInputProvided(timestamp=later(draw, state), tool_call_id=call_id, responses=draw(_ANSWERS))


def _report_on_idle_call(draw: st.DrawFn, state: AgentState) -> AgentInput:
    # Only a running tool asks a question or hands its work to a task.
    call_id = pick(draw, [i for i in recent_calls(state) if state.tool_calls[i].status != "running"])
    at = later(draw, state)
    if draw(st.booleans()):
        return ToolCallInputRequired(timestamp=at, tool_call_id=call_id, requests=draw(_ANSWERS))
    return ToolCallTaskCreated(timestamp=at, tool_call_id=call_id, task_id="task-1")


def _timer_not_due(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    due = due_at(state.turn, state.tool_calls)
    return TimerFired(timestamp=draw(st.integers(state.timestamp, state.timestamp + 1_000 if due is None else due - 1)))


def _while_streaming(draw: st.DrawFn, state: AgentState) -> AgentInput:
    # The call streaming a message must complete it before anything else of a model reply.
    at = later(draw, state)
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return LlmMessageStarted(timestamp=at, message_id=fresh_id(draw, state, "m", message_taken(state)))
    if choice == 1:
        return ReActObserved(timestamp=at, called_llm_at=at, observation=draw(observations()))
    if choice == 2:
        return ContextWindowExpanded(timestamp=at)
    return HistoryToolCallsAdded(timestamp=at, tool_call_ids=tuple(recent_calls(state, 2)))


def _nothing_streams(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return LlmMessageCompleted(timestamp=later(draw, state), message_id=draw(ids()), content="done")


def _empty_continue(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    return ReActObserved(timestamp=at, called_llm_at=at, observation=ContinueReAct(tool_calls={}))


def _observed_before_called(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    called = at + draw(st.integers(1, 1_000))
    return ReActObserved(timestamp=at, called_llm_at=called, observation=draw(observations()))


def _negative_usage(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    negative, other = draw(st.integers(-1_000_000, -1)), draw(st.integers(0, 10))
    usage = Usage(input_tokens=negative, output_tokens=other)
    if draw(st.booleans()):
        usage = Usage(input_tokens=other, output_tokens=negative)
    return ReActObserved(timestamp=at, called_llm_at=at, observation=draw(observations()), usage=usage)


def _duplicate_call_id(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    batch = {pick(draw, recent_calls(state)): ToolCallRequest(name="search")}
    extra = draw(ids())
    if extra not in state.tool_calls:
        batch[extra] = ToolCallRequest(name="fetch")
    return ReActObserved(timestamp=at, called_llm_at=at, observation=ContinueReAct(tool_calls=batch))


# Built once: drawing from prebuilt strategies and then setting the time keeps generation cheap.
_ANY: dict[str, SearchStrategy[AgentInput]] = {tag: strategy(timestamp=st.just(0)) for tag, strategy in BY_TAG.items()}
_SESSION: SearchStrategy[SessionStarted] = session_started(timestamp=0)
_RESULTS = tool_results()
_TEXTS = texts()
_ANSWERS = input_objects()
