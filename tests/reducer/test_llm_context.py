"""``llm_context``: what a model call sends, projected from the state."""

from __future__ import annotations

from hypothesis import given, settings

import agent_core as ac
from agent_core.testing import sessions

from ._build import SEARCH, T0, TOOLS, answer, ask, asked, fold, ok, started, user

Msg = ac.ContextMessage


def began(message_id: str, at: int) -> ac.LlmMessageStarted:
    return ac.LlmMessageStarted(timestamp=at, message_id=message_id)


def said(message_id: str, content: str, at: int) -> ac.LlmMessageCompleted:
    return ac.LlmMessageCompleted(timestamp=at, message_id=message_id, content=content)


def busy_turn() -> ac.AgentState:
    """Turn 2: the model said something and asked for two calls at once; the user added a message
    while they ran; they completed in the other order; then a refund was denied."""
    state = started(system_prompt="You are a support agent.", initial_context_window=3)
    state = fold(state, user("u0", "Hi", at=T0 + 1), answer(at=T0 + 2))
    state = fold(state, user("u1", "Where is order 42?", at=T0 + 3), began("a1", T0 + 4))
    state = fold(state, said("a1", "Checking both.", T0 + 5))
    state = fold(state, ask(at=T0 + 6, t1='fetch:{"id":42}', t2='search:{"q":"delays"}'))
    state = fold(state, user("u2", "It was a gift.", at=T0 + 7))
    state = fold(state, ok("t2", "Storms delay shipping.", at=T0 + 8), ok("t1", "In transit.", at=T0 + 9))
    state = fold(state, ask(at=T0 + 10, t3="refund"))
    return fold(state, ac.ToolCallDenied(timestamp=T0 + 11, tool_call_id="t3", reason="not eligible"))


def test_messages_and_tool_calls_interleave_on_one_timeline() -> None:
    context = ac.llm_context(busy_turn())

    assert context.system_prompt == "You are a support agent."
    assert context.entries == (
        Msg(role="user", content="Hi"),
        Msg(role="user", content="Where is order 42?"),
        Msg(role="assistant", content="Checking both."),
        # Calls asked together form one assistant message; each result follows it, in call order.
        ac.ContextToolCalls(
            calls=(
                ac.ContextToolCall(id="t1", name="fetch", parameters='{"id":42}'),
                ac.ContextToolCall(id="t2", name="search", parameters='{"q":"delays"}'),
            )
        ),
        ac.ContextToolResult(tool_call_id="t1", name="fetch", content="In transit."),
        ac.ContextToolResult(tool_call_id="t2", name="search", content="Storms delay shipping."),
        # Received while the calls ran, so after their results, not between call and result.
        Msg(role="user", content="It was a gift."),
        ac.ContextToolCalls(calls=(ac.ContextToolCall(id="t3", name="refund", parameters="{}"),)),
        # A denial reaches the model as a failure result carrying the reason.
        ac.ContextToolResult(
            tool_call_id="t3", name="refund", content="denied by the user: not eligible", is_error=True
        ),
    )
    assert (context.tools, context.tools_enabled, context.older_messages) == (TOOLS, True, 0)


def test_the_window_keeps_the_last_messages_and_counts_the_older_ones() -> None:
    state = started(initial_context_window=2)
    for i in range(4):
        state = fold(state, user(f"u{i}", f"question {i}", at=T0 + 1 + 2 * i), answer(at=T0 + 2 + 2 * i))
    state = fold(state, user("u4", "question 4", at=T0 + 9))

    context = ac.llm_context(state)
    assert context.entries == (Msg(role="user", content="question 3"), Msg(role="user", content="question 4"))
    assert context.older_messages == 3


def test_between_turns_it_shows_the_initial_window() -> None:
    state = fold(started(initial_context_window=2), user("u0", "a", at=T0 + 1), answer(at=T0 + 2))
    state = fold(state, user("u1", "b", at=T0 + 3), answer(at=T0 + 4), user("u2", "c", at=T0 + 5))
    state = fold(state, ac.ReActCancelled(timestamp=T0 + 6))
    context = ac.llm_context(state)
    assert [e.content for e in context.entries if isinstance(e, Msg)] == ["b", "c"]
    assert context.older_messages == 1


def test_calls_of_earlier_turns_are_past_calls_not_context() -> None:
    state = fold(busy_turn(), answer(at=T0 + 12), user("u3", "Thanks", at=T0 + 13))
    context = ac.llm_context(state)
    assert not any(isinstance(e, ac.ContextToolCalls | ac.ContextToolResult) for e in context.entries)
    assert context.past_tool_calls == (
        ac.PastToolCall(id="t3", name="refund", parameters="{}"),
        ac.PastToolCall(id="t2", name="search", parameters='{"q":"delays"}'),
        ac.PastToolCall(id="t1", name="fetch", parameters='{"id":42}'),
    )


def test_past_calls_list_the_most_recent_twenty() -> None:
    state = fold(started(), user("u1", at=T0 + 1))
    state = fold(state, asked({f"t{i:02}": f'fetch:{{"id":{i}}}' for i in range(25)}, at=T0 + 2))
    state = fold(state, *(ok(f"t{i:02}", at=T0 + 3) for i in range(25)), answer(at=T0 + 4), user("u2", at=T0 + 5))
    past = ac.llm_context(state).past_tool_calls
    assert [c.id for c in past] == [f"t{i:02}" for i in range(24, 4, -1)]


def test_calls_still_open_are_not_listed_as_past() -> None:
    state = fold(started(), user("u1", at=T0 + 1), ask(at=T0 + 2, t1="search"))
    assert ac.llm_context(state).past_tool_calls == ()


def test_tools_are_empty_for_the_final_answer() -> None:
    state = fold(started(tools=(SEARCH,), max_tool_calls=1, on_budget_exhausted="final-answer"), user("u1", at=T0 + 1))
    state = fold(state, ask(at=T0 + 2, t1="search"), ok("t1", at=T0 + 3), ask(at=T0 + 4, t2="search:{}"))
    context = ac.llm_context(state)
    assert (context.tools, context.tools_enabled, context.past_tool_calls) == ((), False, ())
    # The refused call and its reason are still shown, so the model knows why it must answer now.
    assert context.entries[-1] == ac.ContextToolResult(
        tool_call_id="t2",
        name="search",
        content="not run: the turn's budget of 1 tool calls is spent (1 used, 1 asked)",
        is_error=True,
    )


def test_an_empty_state_has_an_empty_context() -> None:
    context = ac.llm_context(ac.initial_state())
    assert context == ac.LlmContext(system_prompt="", entries=(), tools=(), tools_enabled=True)


def reference_entries(state: ac.AgentState) -> tuple[ac.ContextEntry, ...]:
    """The timeline by its definition: windowed messages and the turn's calls sorted by (seq, kind, order), each
    with its provider items."""
    turn, messages = state.turn, state.messages
    count = len(messages)
    window = turn.context_window_size if turn is not None else min(state.config.initial_context_window, count)
    timeline: list[tuple[int, int, int, ac.ContextEntry]] = []
    for position in range(count - window, count):
        m = messages[position]
        if not m.streaming and (m.role == "user" or m.content):
            timeline.append((m.seq, 0, position, Msg(role=m.role, content=m.content, items=m.items)))
    records = [state.tool_calls[i] for i in (turn.tool_call_ids if turn is not None else ())]
    for seq in {r.seq for r in records}:
        group = [r for r in records if r.seq == seq]
        calls = tuple(ac.ContextToolCall(id=r.id, name=r.name, parameters=r.parameters) for r in group)
        items = group[0].items  # the batch's first call holds its model call's provider items
        timeline.append((seq, 1, 0, ac.ContextToolCalls(calls=calls, items=items)))
        for order, r in enumerate(group):
            if isinstance(r.result, ac.ToolSuccess):
                result = ac.ContextToolResult(tool_call_id=r.id, name=r.name, content=r.result.content)
                timeline.append((seq, 2, order, result))
            elif isinstance(r.result, ac.ToolFailure):
                failure = ac.ContextToolResult(tool_call_id=r.id, name=r.name, content=r.result.error, is_error=True)
                timeline.append((seq, 2, order, failure))
    return tuple(entry for *_, entry in sorted(timeline, key=lambda item: item[:3]))


def reference_past_calls(state: ac.AgentState) -> tuple[ac.PastToolCall, ...]:
    """Completed calls outside the context, newest first, at most twenty."""
    in_context = set(state.turn.tool_call_ids) if state.turn is not None else set()
    log = [state.tool_call_log[i] for i in range(len(state.tool_call_log))]
    past = [state.tool_calls[i] for i in reversed(log) if i not in in_context]
    listed = [ac.PastToolCall(id=r.id, name=r.name, parameters=r.parameters) for r in past if r.status == "completed"]
    return tuple(listed[:20])


@settings(max_examples=max(20, settings().max_examples))
@given(sessions(max_steps=60))
def test_the_context_matches_its_definition_after_every_input(inputs: list[ac.AgentInput]) -> None:
    state = ac.initial_state()
    for inp in inputs:
        state = ac.transition(state, inp)
        context = ac.llm_context(state)
        assert context.entries == reference_entries(state)
        assert context.past_tool_calls == (reference_past_calls(state) if context.tools_enabled else ())


def test_a_call_loaded_from_history_takes_its_place_in_time_before_the_turn_s_own_calls() -> None:
    state = fold(started(), user("u1", "Where is order 42?", at=T0 + 1), ask(at=T0 + 2, t1='fetch:{"id":42}'))
    state = fold(state, ok("t1", "In transit.", at=T0 + 3), answer(at=T0 + 4), user("u2", "Any delays?", at=T0 + 5))
    state = fold(state, ask(at=T0 + 6, t2='search:{"q":"delays"}'), ok("t2", "Storms.", at=T0 + 7))
    state = fold(state, ac.HistoryToolCallsAdded(timestamp=T0 + 8, tool_call_ids=("t1",)))
    assert state.turn is not None and state.turn.tool_call_ids == ("t2", "t1")
    assert ac.llm_context(state).entries == (
        Msg(role="user", content="Where is order 42?"),
        ac.ContextToolCalls(calls=(ac.ContextToolCall(id="t1", name="fetch", parameters='{"id":42}'),)),
        ac.ContextToolResult(tool_call_id="t1", name="fetch", content="In transit."),
        Msg(role="user", content="Any delays?"),
        ac.ContextToolCalls(calls=(ac.ContextToolCall(id="t2", name="search", parameters='{"q":"delays"}'),)),
        ac.ContextToolResult(tool_call_id="t2", name="search", content="Storms."),
    )
