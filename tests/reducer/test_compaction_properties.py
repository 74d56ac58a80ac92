"""Properties of context compaction over random sessions under random compaction policies: replay equals
live, invariants and write sets hold, the context sent stays within the declared window (give or take one
message), every message and tool result is in the context, covered by a summary, or reachable by an internal
tool, and a fork at any record reproduces the context the model saw there."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agent_core as ac
from agent_core.testing import agent_configs, compaction_policies, sessions

CONFIGS = agent_configs(compaction=compaction_policies(), max_turn_ms=st.none())
SESSIONS = sessions(max_steps=60, config=CONFIGS)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _entry_tokens(entry: ac.ContextEntry) -> int:
    return ac.context_tokens(ac.LlmContext(system_prompt="", entries=(entry,), tools=(), tools_enabled=False))


def _states(inputs: list[ac.AgentInput]) -> list[ac.AgentState]:
    state, out = ac.initial_state(), []
    for inp in inputs:
        before = state
        state = ac.transition(state, inp)
        ac.check_invariants(state, before)
        changed = {
            name for name in ac.AgentState.__struct_fields__ if getattr(state, name) is not getattr(before, name)
        }
        assert changed <= ac.WRITE_SETS[ac.tag_of(inp)] | {"timestamp", "step"}, ac.tag_of(inp)
        out.append(state)
    return out


@FAST
@given(SESSIONS)
def test_replay_equals_live_and_a_fork_at_any_record_sees_the_same_context(inputs: list[ac.AgentInput]) -> None:
    states = _states(inputs)
    assert ac.state_hash(ac.replay(inputs)) == ac.state_hash(states[-1])
    for k in range(0, len(inputs), 7):
        forked = ac.replay(ac.decode_log(ac.encode_log(inputs[: k + 1])))
        assert ac.llm_context(forked) == ac.llm_context(states[k])
        assert ac.effects_at(forked) == ac.effects_at(states[k])


@FAST
@given(SESSIONS)
def test_an_answer_is_asked_for_only_with_a_context_within_the_window_give_or_take_one_message(
    inputs: list[ac.AgentInput],
) -> None:
    for state in _states(inputs):
        policy = state.config.compaction
        assert policy is not None
        answering = [e for e in ac.effects_at(state).values() if isinstance(e, ac.CallLlm) and e.task == "answer"]
        if not answering:
            continue
        context = ac.llm_context(state)
        tokens = ac.context_tokens(context)
        largest = max((_entry_tokens(entry) for entry in context.entries), default=0)
        assert tokens - largest <= policy.context_window_tokens, (tokens, largest, policy)


@FAST
@given(SESSIONS)
def test_every_message_and_tool_result_is_in_the_context_summarized_or_reachable(
    inputs: list[ac.AgentInput],
) -> None:
    for state in _states(inputs):
        context = ac.llm_context(state)
        compaction = state.compaction
        assert compaction is not None
        shown = [e for e in context.entries if isinstance(e, ac.ContextMessage)]
        visible = [m for m in state.messages if not m.streaming and (m.role == "user" or m.content)]
        older = [
            m for i, m in enumerate(state.messages) if i < max(context.older_messages, compaction.summarized_messages)
        ]
        missing = [m for m in visible if m not in older and not any(e.content == m.content for e in shown)]
        assert missing == []
        results = {e.tool_call_id: e for e in context.entries if isinstance(e, ac.ContextToolResult)}
        for call_id in context.cleared_tool_calls:
            record = state.tool_calls[call_id]
            assert results[call_id].content == ac.cleared_result(call_id, record.name)
        for call_id, entry in results.items():
            record = state.tool_calls[call_id]
            if call_id in context.cleared_tool_calls or record.result is None:
                continue
            text = record.result.content if isinstance(record.result, ac.ToolSuccess) else record.result.error
            assert entry.content == text
        # Anything else is a recorded call: the history tool loads any of them by id.
        if state.turn is not None and ac.phase(state) == "thinking" and not compaction.request:
            some = tuple(state.tool_calls.keys())[:3] if len(state.tool_calls) else ()
            loaded = ac.check(state, ac.HistoryToolCallsAdded(timestamp=state.timestamp, tool_call_ids=tuple(some)))
            assert loaded is None or loaded.code == "still-streaming"


def test_a_nonsense_policy_is_refused_at_the_start_with_what_was_expected() -> None:
    policy = ac.CompactionPolicy(
        context_window_tokens=0, strategy="shrink", trigger_percent=120, keep_recent_percent=-1
    )
    start = ac.SessionStarted(timestamp=1, session_id="s", config=ac.AgentConfig(compaction=policy))
    rejection = ac.check(ac.initial_state(), start)
    assert rejection is not None and rejection.code == "bad-config"
    assert rejection.message == (
        "expected compaction.context_window_tokens of 1 or more, got 0; "
        "expected compaction.trigger_percent from 1 to 100, got 120; "
        "expected compaction.keep_recent_percent from 0 to below trigger_percent (120), got -1; "
        "compaction strategy 'shrink' is not registered; expected one of: summarize, clear-tool-results, provider "
        "(register_compaction_strategy(), imported before the session starts or resumes)"
    )


def test_a_summary_that_would_fire_compaction_again_is_refused() -> None:
    policy = ac.CompactionPolicy(context_window_tokens=1000, summary_max_tokens=700)
    start = ac.SessionStarted(timestamp=1, session_id="s", config=ac.AgentConfig(compaction=policy))
    rejection = ac.check(ac.initial_state(), start)
    assert rejection is not None
    assert "expected compaction.summary_max_tokens from 1 to below 550" in rejection.message


def test_a_registered_strategy_chooses_the_results_to_clear() -> None:
    @ac.register_compaction_strategy("clear-searches")
    def clear_searches(state: ac.AgentState, policy: ac.CompactionPolicy) -> list[str]:
        turn = state.turn
        return [i for i in (turn.tool_call_ids if turn else ()) if state.tool_calls[i].name == "search"]

    policy = ac.CompactionPolicy(
        context_window_tokens=500, strategy="clear-searches", trigger_percent=10, keep_recent_percent=0
    )
    config = ac.AgentConfig(compaction=policy)
    tools = (ac.ToolDefinition(name="search"), ac.ToolDefinition(name="read"))
    log: list[ac.AgentInput] = [
        ac.SessionStarted(timestamp=1, session_id="s", config=config, tools=tools),
        ac.UserMessageReceived(timestamp=2, message_id="u1", content="find it"),
        ac.ReActObserved(
            timestamp=3,
            called_llm_at=2,
            observation=ac.ContinueReAct(
                tool_calls={"t1": ac.ToolCallRequest(name="search"), "t2": ac.ToolCallRequest(name="read")}
            ),
        ),
        ac.ToolCallCompleted(timestamp=4, tool_call_id="t1", result=ac.ToolSuccess(content="found " * 20)),
        ac.ToolCallCompleted(timestamp=5, tool_call_id="t2", result=ac.ToolSuccess(content="read")),
    ]
    state = ac.replay(log)
    assert ac.llm_context(state).cleared_tool_calls == ("t1",)
    assert "clear-searches" in ac.known_compaction_strategies()


def test_no_answer_is_rejected_while_a_summarization_is_under_way() -> None:
    policy = ac.CompactionPolicy(
        context_window_tokens=400, trigger_percent=50, keep_recent_percent=10, summary_max_tokens=100
    )
    log: list[ac.AgentInput] = [
        ac.SessionStarted(timestamp=1, session_id="s", config=ac.AgentConfig(compaction=policy)),
        ac.UserMessageReceived(timestamp=2, message_id="u1", content="background " * 80),
        ac.AnswerRejected(
            timestamp=3,
            called_llm_at=2,
            reason="empty-answer",
            message_id="n1",
            usage=ac.Usage(input_tokens=400),
        ),
    ]
    state = ac.replay(log)
    assert state.compaction is not None and state.compaction.request is not None  # the rejection's tokens fired it
    again = ac.AnswerRejected(timestamp=4, called_llm_at=3, reason="empty-answer", message_id="n2")
    rejection = ac.check(state, again)
    assert rejection is not None and rejection.code == "summarizing"


def test_a_registered_strategy_that_raises_fails_the_turn_with_its_error() -> None:
    @ac.register_compaction_strategy("clear-broken")
    def clear_broken(state: ac.AgentState, policy: ac.CompactionPolicy) -> list[str]:
        raise KeyError("no such call")

    policy = ac.CompactionPolicy(
        context_window_tokens=500, strategy="clear-broken", trigger_percent=10, keep_recent_percent=0
    )
    tools = (ac.ToolDefinition(name="search"),)
    log: list[ac.AgentInput] = [
        ac.SessionStarted(timestamp=1, session_id="s", config=ac.AgentConfig(compaction=policy), tools=tools),
        ac.UserMessageReceived(timestamp=2, message_id="u1", content="find it"),
        ac.ReActObserved(
            timestamp=3,
            called_llm_at=2,
            observation=ac.ContinueReAct(tool_calls={"t1": ac.ToolCallRequest(name="search")}),
        ),
        ac.ToolCallCompleted(timestamp=4, tool_call_id="t1", result=ac.ToolSuccess(content="found " * 200)),
    ]
    state = ac.replay(log)  # the reducer raises nothing: the strategy's error is the turn's outcome
    outcome = state.last_outcome
    assert state.turn is None and outcome is not None
    assert (outcome.kind, outcome.reason) == ("failed", "compaction:clear-broken-raised")
    assert outcome.detail == "compaction strategy 'clear-broken' raised KeyError: 'no such call'"
    assert ac.state_hash(ac.decode_state(ac.encode_state(state))) == ac.state_hash(state)
