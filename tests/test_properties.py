"""Properties of the pure core over random sessions drawn with ``agent_core.testing``.

Each test folds generated sessions (mostly accepted inputs, a few deliberately
refused ones) and checks one promise of the design at every step.
"""

from __future__ import annotations

from collections.abc import Iterator
from inspect import ismodule
from typing import Literal, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

import agent_core as ac
import agent_core.testing
from agent_core.testing import (
    fold,
    inputs,
    invalid_input,
    next_input,
    next_input_kinds,
    sessions,
)

EXAMPLES = settings().max_examples
"""The active profile's example count (``ci`` or ``dev``, see conftest.py)."""

# One strategy per kind, named after its tag (``tool-call-completed`` -> ``tool_call_completed``),
# drawing a delay that tests add to the state's time.
DELAYS = st.integers(0, 100_000)
BY_KIND = {tag: getattr(agent_core.testing, tag.replace("-", "_"))(timestamp=DELAYS) for tag in ac.INPUT_TAGS}
ANY_INPUT = inputs(timestamp=DELAYS)

SESSIONS = sessions(min_steps=10, max_steps=50)
MIXED = sessions(min_steps=10, max_steps=50, invalid=True)
FORMATS: tuple[Literal["json", "msgpack"], ...] = ("json", "msgpack")

slow = pytest.mark.slow  # a property folding dozens of sessions can take more than a second


class Step(NamedTuple):
    """One input applied to ``before``: ``after`` when accepted, else the ``rejection``."""

    before: ac.AgentState
    inp: ac.AgentInput
    after: ac.AgentState | None
    rejection: ac.Rejection | None


def walk(inputs: list[ac.AgentInput]) -> Iterator[Step]:
    """Fold ``inputs``, skipping refused ones, and yield every step."""
    state = ac.initial_state()
    for inp in inputs:
        try:
            after = ac.transition(state, inp)
        except ac.InvalidInput as error:
            yield Step(state, inp, None, error.rejection)
            continue
        yield Step(state, inp, after, None)
        state = after


def accepted(inputs: list[ac.AgentInput]) -> Iterator[tuple[ac.AgentState, ac.AgentInput, ac.AgentState]]:
    """The accepted steps of ``walk(inputs)`` as ``(before, input, after)``."""
    for step in walk(inputs):
        if step.after is not None:
            yield step.before, step.inp, step.after


def call_llm_keys(state: ac.AgentState) -> list[str]:
    """The keys of the model calls ``state`` derives."""
    return [key for key in ac.effects_at(state) if key.startswith("call-llm:")]


# --- determinism and purity ------------------------------------------------------


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS)
def test_same_inputs_give_equal_states_and_bytes(inputs: list[ac.AgentInput]) -> None:
    first, second = ac.initial_state(), ac.initial_state()
    for inp in inputs:
        first, second = ac.transition(first, inp), ac.transition(second, inp)
        assert first == second
        for format in FORMATS:
            assert ac.encode_state(first, format=format) == ac.encode_state(second, format=format)
        assert ac.state_hash(first) == ac.state_hash(second)
        assert ac.effects_at(first) == ac.effects_at(second)
        assert ac.llm_context(first) == ac.llm_context(second)


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, SESSIONS)
def test_one_state_encoder_writes_every_state_as_encode_state_does(
    inputs: list[ac.AgentInput], others: list[ac.AgentInput]
) -> None:
    # One encoder over a session's states (records change status in place, new ones are added) and over decoded
    # copies of them (other objects), then over another session's states: always the bytes of encode_state.
    encoder = ac.StateEncoder()
    for step in walk(inputs):
        if step.after is None:
            continue
        expected = ac.encode_state(step.after, format="msgpack")
        assert encoder.encode(step.after) == expected
        assert encoder.encode(ac.decode_state(expected, format="msgpack")) == expected
    for step in walk(others):
        if step.after is not None:
            assert encoder.encode(step.after) == ac.encode_state(step.after, format="msgpack")


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_nothing_changes_the_state_it_is_given(inputs: list[ac.AgentInput]) -> None:
    for step in walk(inputs):
        state = step.before
        encoded = ac.encode_state(state, format="msgpack")
        ac.check(state, step.inp)
        ac.effects_at(state)
        ac.llm_context(state)
        ac.phase(state)
        ac.valid_inputs(state)
        ac.check_invariants(state)
        ac.state_hash(state)
        assert ac.encode_state(state, format="msgpack") == encoded
        # A rejected input leaves its state exactly as it was.
        if step.rejection is not None:
            assert ac.encode_state(state, format="msgpack") == encoded


# --- invariants, guards and the phase table --------------------------------------


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_invariants_hold_after_every_accepted_input(inputs: list[ac.AgentInput]) -> None:
    for before, _, after in accepted(inputs):
        ac.check_invariants(after, before)


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, st.data())
def test_check_is_none_exactly_when_transition_accepts(inputs: list[ac.AgentInput], data: st.DataObject) -> None:
    for before, _, _ in accepted(inputs):
        source = data.draw(st.sampled_from(("arbitrary", "next", "invalid")))
        if source == "next":
            candidate = data.draw(next_input(before))
        elif source == "invalid":
            candidate = data.draw(invalid_input(before))
        else:
            candidate = arbitrary(data, before.timestamp)
        rejection = ac.check(before, candidate)
        try:
            ac.transition(before, candidate)
        except ac.InvalidInput as error:
            assert error.rejection == rejection
        else:
            assert rejection is None


def arbitrary(data: st.DataObject, now: int, tag: str | None = None) -> ac.AgentInput:
    """An arbitrary input (of kind ``tag``) timed at or a little after ``now``, so most are
    judged on more than their time."""
    inp: ac.AgentInput = data.draw(ANY_INPUT if tag is None else BY_KIND[tag])
    return replace(inp, timestamp=now + inp.timestamp)


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_rejections_name_code_guard_message_and_valid_inputs(inputs: list[ac.AgentInput]) -> None:
    for step in walk(inputs):
        rejection = step.rejection
        if rejection is None:
            continue
        assert rejection.code
        assert rejection.guard
        assert rejection.message
        assert rejection.input_type == ac.tag_of(step.inp)
        assert rejection.valid_now == ac.valid_inputs(step.before)


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, st.data())
def test_drawn_invalid_inputs_are_refused(inputs: list[ac.AgentInput], data: st.DataObject) -> None:
    for before, _, after in accepted(inputs):
        for state in (before, after):
            wrong = data.draw(invalid_input(state))
            assert ac.check(state, wrong) is not None, f"{ac.tag_of(wrong)} was accepted in {ac.phase(state)}"


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, st.data())
def test_accepted_kinds_are_those_the_phase_lists(inputs: list[ac.AgentInput], data: st.DataObject) -> None:
    for before, inp, after in accepted(inputs):
        assert ac.tag_of(inp) in ac.VALID_INPUTS[ac.phase(before)]
        assert set(next_input_kinds(after)) <= set(ac.valid_inputs(after))
        # A kind the phase does not list is refused whatever it carries.
        unlisted = [tag for tag in ac.INPUT_TAGS if tag not in ac.valid_inputs(after)]
        tag = data.draw(st.sampled_from(unlisted))
        wrong = arbitrary(data, after.timestamp, tag)
        assert ac.check(after, wrong) is not None


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_time_never_goes_backwards(inputs: list[ac.AgentInput]) -> None:
    for step in walk(inputs):
        if step.after is not None:
            assert step.after.timestamp == step.inp.timestamp >= step.before.timestamp
            assert step.after.step == step.before.step + 1
        elif step.inp.timestamp < step.before.timestamp:
            assert step.rejection is not None
            assert step.rejection.code == "time-went-backwards"


# --- codecs, replay, hashes -------------------------------------------------------


@settings(max_examples=EXAMPLES * 5, deadline=None)
@given(inputs())
def test_every_input_survives_both_codecs(inp: ac.AgentInput) -> None:
    for format in FORMATS:
        data = ac.encode_input(inp, format=format)
        decoded = ac.decode_input(data, format=format)
        assert decoded == inp
        assert ac.encode_input(decoded, format=format) == data


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_every_session_input_and_reached_state_survives_both_codecs(inputs: list[ac.AgentInput]) -> None:
    for step in walk(inputs):
        for format in FORMATS:
            data = ac.encode_input(step.inp, format=format)
            assert ac.decode_input(data, format=format) == step.inp
        if step.after is None:
            continue
        for format in FORMATS:
            data = ac.encode_state(step.after, format=format)
            decoded = ac.decode_state(data, format=format)
            assert decoded == step.after
            assert ac.encode_state(decoded, format=format) == data
            assert ac.state_hash(decoded) == ac.state_hash(step.after)
            # The decoded state behaves the same, not only compares equal.
            assert ac.effects_at(decoded) == ac.effects_at(step.after)
            assert ac.llm_context(decoded) == ac.llm_context(step.after)
            assert ac.phase(decoded) == ac.phase(step.after)


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, st.data())
def test_a_decoded_state_continues_like_the_original(inputs: list[ac.AgentInput], data: st.DataObject) -> None:
    state = ac.replay(inputs)
    decoded = ac.decode_state(ac.encode_state(state))
    following = data.draw(next_input(state))
    assert ac.state_hash(ac.transition(decoded, following)) == ac.state_hash(ac.transition(state, following))


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_replay_of_a_log_equals_the_live_fold(inputs: list[ac.AgentInput]) -> None:
    live, log = fold(inputs)
    assert ac.replay(log) == live
    assert ac.state_hash(ac.replay(log)) == ac.state_hash(live)
    assert ac.decode_log(ac.encode_log(log)) == log
    assert ac.replay(ac.decode_log(ac.encode_log(log))) == live
    # Folding can resume from any state: a prefix, then the rest.
    middle = len(log) // 2
    assert ac.replay(log[middle:], ac.replay(log[:middle])) == live


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_replay_raises_at_the_first_refused_input(inputs: list[ac.AgentInput]) -> None:
    refused = [index for index, step in enumerate(walk(inputs)) if step.rejection is not None]
    if not refused:
        assert ac.replay(inputs) == fold(inputs)[0]
        return
    with pytest.raises(ac.InvalidInput) as info:
        ac.replay(inputs)
    assert info.value.index == refused[0]


# --- what each transition may touch --------------------------------------------------


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_each_transition_writes_only_its_declared_fields(inputs: list[ac.AgentInput]) -> None:
    for before, inp, after in accepted(inputs):
        allowed = ac.WRITE_SETS[ac.tag_of(inp)]
        for name in ac.AgentState.__struct_fields__:
            if getattr(before, name) != getattr(after, name):
                assert name in allowed, f"{ac.tag_of(inp)} changed {name}, outside its write set {sorted(allowed)}"


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_open_tool_calls_keep_their_effect_key(inputs: list[ac.AgentInput]) -> None:
    for before, _, after in accepted(inputs):
        effects_before, effects_after = ac.effects_at(before), ac.effects_at(after)
        still_open = set(after.turn.open_call_ids) if after.turn is not None else set()
        # A call backing off before another attempt (its tool's retry policy) runs a wait-until meanwhile.
        still_open = {i for i in still_open if after.tool_calls[i].retry_at is None}
        for key, effect in effects_before.items():
            if key.startswith("call-tool:") and key.removeprefix("call-tool:") in still_open:
                assert effects_after.get(key) == effect


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_a_call_key_once_gone_never_returns(inputs: list[ac.AgentInput]) -> None:
    # A finished, failed or cancelled call is a different call from any later one (a retry
    # is a new attempt), so the runner must see a new key for it.
    gone: set[str] = set()
    for before, inp, after in accepted(inputs):
        keys_before = {key for key in ac.effects_at(before) if not key.startswith("wait-until:")}
        keys_after = {key for key in ac.effects_at(after) if not key.startswith("wait-until:")}
        gone |= keys_before - keys_after
        assert not gone & keys_after, f"{ac.tag_of(inp)} derived again the finished {sorted(gone & keys_after)}"


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_the_model_call_key_follows_its_context_not_time(inputs: list[ac.AgentInput]) -> None:
    for before, inp, after in accepted(inputs):
        keys_before, keys_after = call_llm_keys(before), call_llm_keys(after)
        tag = ac.tag_of(inp)
        if tag in ("llm-message-started", "llm-message-completed"):
            # The call that is answering must not be cancelled by its own output.
            assert keys_after == keys_before
        streaming = before.turn.streaming_message_id if before.turn else ""
        if streaming and after.turn is not None and after.turn.streaming_message_id == streaming:
            assert keys_after == keys_before, f"{tag} changed the key of the call streaming {streaming!r}"
        if keys_before and keys_after == keys_before and tag != "llm-message-completed":
            assert ac.llm_context(after) == ac.llm_context(before), f"{tag} changed the context, not the key"


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS)
def test_a_model_call_sends_the_window_and_every_call_of_the_turn_with_its_result(
    inputs: list[ac.AgentInput],
) -> None:
    for _, _, after in accepted(inputs):
        turn = after.turn
        if ac.phase(after) is not ac.Phase.THINKING:
            continue
        assert turn is not None
        context = ac.llm_context(after)
        requested: list[str] = []
        answered: list[str] = []
        for entry in context.entries:
            if isinstance(entry, ac.ContextToolCalls):
                requested += [call.id for call in entry.calls]
            elif isinstance(entry, ac.ContextToolResult):
                assert entry.tool_call_id in requested, "a result comes before the call that asked for it"
                answered.append(entry.tool_call_id)
        assert sorted(requested) == sorted(answered) == sorted(turn.tool_call_ids)
        count = len(after.messages)
        window = [after.messages[i] for i in range(count - turn.context_window_size, count)]
        shown = [(m.role, m.content) for m in window if not m.streaming and (m.role == "user" or m.content)]
        assert [(e.role, e.content) for e in context.entries if isinstance(e, ac.ContextMessage)] == shown
        assert context.tools_enabled is not turn.final_answer
        # The active agent's instructions and tools: the session's until a handoff, then the profile's.
        profile = next((p for p in after.config.agents if p.name == after.agent), None) if after.agent else None
        assert context.system_prompt == (profile.system_prompt if profile else after.config.system_prompt)
        own = profile.tools if profile else after.tools.definitions
        transfers = tuple(ac.transfer_tool_name(n) for n in (profile.handoffs if profile else after.config.handoffs))
        if context.tools_enabled and after.config.workflow is None:
            assert tuple(t.name for t in context.tools) == (*(t.name for t in own), *transfers)


# --- budgets ------------------------------------------------------------------------


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_budgets_bound_every_turn(inputs: list[ac.AgentInput]) -> None:
    for _, _, after in accepted(inputs):
        turn, config = after.turn, after.config
        if turn is None:
            continue
        if config.max_tool_calls is not None:
            assert turn.tool_call_count <= config.max_tool_calls
        calls = [effect for effect in ac.effects_at(after).values() if isinstance(effect, ac.CallLlm)]
        if not calls:
            continue
        assert calls[0].tools_enabled is not turn.final_answer
        if turn.final_answer:
            # The one model call beyond the budget, allowed only to answer.
            assert config.on_budget_exhausted == "final-answer"
            continue
        if config.max_model_calls is not None:
            assert turn.model_calls < config.max_model_calls
        if config.max_tokens is not None:
            assert turn.tokens < config.max_tokens


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_only_registered_and_approved_tools_ever_run(inputs: list[ac.AgentInput]) -> None:
    approved: set[str] = set()
    for _, inp, after in accepted(inputs):
        if isinstance(inp, ac.ToolCallApproved):
            approved.add(inp.tool_call_id)
        for effect in ac.effects_at(after).values():
            if not isinstance(effect, ac.CallTool):
                continue
            tool = ac.active_tools(after).get(effect.name)  # the tools of the agent the session was handed to
            assert tool is not None, f"unregistered tool {effect.name!r} would run"
            assert not tool.requires_approval or effect.tool_call_id in approved, "ran before anyone approved it"


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(SESSIONS, st.data())
def test_failed_model_calls_retry_with_backoff_until_attempts_run_out(
    inputs: list[ac.AgentInput], data: st.DataObject
) -> None:
    # From a few states that ask the model, fail the call again and again (an outage).
    thinking = [after for _, _, after in accepted(inputs) if ac.phase(after) is ac.Phase.THINKING][:3]
    for state in thinking:
        while ac.phase(state) in (ac.Phase.THINKING, ac.Phase.RETRYING):
            if ac.phase(state) is ac.Phase.RETRYING:
                state = ac.transition(state, data.draw(next_input(state, kind="timer-fired")))
                continue
            failed = data.draw(next_input(state, kind="llm-call-failed"))
            assert isinstance(failed, ac.LlmCallFailed)
            state = check_retry(state, failed)


def spends_budget(before: ac.AgentState, failed: ac.LlmCallFailed) -> bool:
    """Whether ``failed`` carries a cost that spends a cost budget of the turn (outside its final answer)."""
    turn, config = before.turn, before.config
    if failed.cost is None or turn is None or turn.final_answer:
        return False
    over_turn = config.max_cost is not None and turn.cost + failed.cost >= config.max_cost
    over_session = config.max_session_cost is not None and before.cost + failed.cost >= config.max_session_cost
    return over_turn or over_session


def check_retry(before: ac.AgentState, failed: ac.LlmCallFailed) -> ac.AgentState:
    """Apply a model call's failure and check its retry (or the end of the turn)."""
    after = ac.transition(before, failed)
    assert before.turn is not None
    config, number = before.config, before.turn.number
    failures = before.turn.attempt + 1
    if spends_budget(before, failed):
        # A failure that was paid for and spent a cost budget is not retried: the turn ends or answers now.
        assert after.turn is None or after.turn.final_answer
        outcome = after.last_outcome
        assert after.turn is not None or (outcome is not None and outcome.reason in ("max-cost", "max-session-cost"))
    elif failed.retryable and failures < config.llm_max_attempts:
        delay = min(config.retry_max_ms, config.retry_base_ms * 2 ** (failures - 1))
        assert after.turn is not None and ac.phase(after) is ac.Phase.RETRYING
        assert after.turn.retry_at == failed.timestamp + max(delay, failed.retry_after_ms or 0)
    else:
        assert after.last_outcome is not None
        assert (after.last_outcome.turn, after.last_outcome.reason) == (number, "llm-error")
    return after


@slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(MIXED)
def test_a_due_deadline_ends_the_turn_or_asks_for_the_final_answer(inputs: list[ac.AgentInput]) -> None:
    for before, inp, after in accepted(inputs):
        turn = before.turn
        if not isinstance(inp, ac.TimerFired) or turn is None or turn.deadline is None:
            continue
        if inp.timestamp < turn.deadline:
            continue
        if before.config.on_budget_exhausted == "final-answer" and not turn.final_answer:
            assert after.turn is not None and after.turn.number == turn.number
            assert after.turn.final_answer and after.turn.exhausted == "timeout"
        else:
            assert after.last_outcome is not None
            assert (after.last_outcome.turn, after.last_outcome.reason) == (turn.number, "timeout")


# --- the strategies module itself ---------------------------------------------------


def test_agent_core_testing_is_a_documented_public_door() -> None:
    module = agent_core.testing
    names = list(module.__all__)
    assert names == sorted(names)
    bound = {name for name, value in vars(module).items() if not name.startswith("_") and not ismodule(value)}
    assert bound == set(names)
    undocumented = [name for name in names if not (getattr(module, name).__doc__ or "").strip()]
    assert undocumented == []
    # One strategy per input kind, named after its tag.
    assert {tag.replace("-", "_") for tag in ac.INPUT_TAGS} <= set(names)


# --- regressions found by these properties --------------------------------------------


def test_negative_token_usage_is_refused() -> None:
    # Accepted once: it lowered input_tokens and the turn's spend, so counters went backwards.
    t = 1_700_000_000_000
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=t, session_id="s"),
            ac.UserMessageReceived(timestamp=t, message_id="m", content="hi"),
        ]
    )
    observed = ac.ReActObserved(
        timestamp=t, called_llm_at=t, observation=ac.CompleteReAct(), usage=ac.Usage(input_tokens=-1)
    )
    rejection = ac.check(state, observed)
    assert rejection is not None
    assert rejection.code == "negative-usage"
    assert rejection.message == "expected token counts of 0 or more, got input_tokens=-1, output_tokens=0"


@pytest.mark.parametrize(
    ("config", "outcome", "calls"),
    [
        (ac.AgentConfig(max_model_calls=0), "max-model-calls", []),
        (ac.AgentConfig(max_tokens=0), "max-tokens", []),
        (ac.AgentConfig(max_model_calls=0, on_budget_exhausted="final-answer"), None, [False]),
    ],
)
def test_a_budget_spent_at_the_start_binds_the_first_model_call(
    config: ac.AgentConfig, outcome: str | None, calls: list[bool]
) -> None:
    # Once, the opening model call was derived without checking the budgets: a budget of 0
    # still made a full call with tools, and the final answer came on top of it.
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", config=config),
            ac.UserMessageReceived(timestamp=1, message_id="m", content="hi"),
        ]
    )
    assert (state.last_outcome.reason if state.last_outcome else None) == outcome
    derived = [effect.tools_enabled for effect in ac.effects_at(state).values() if isinstance(effect, ac.CallLlm)]
    assert derived == calls


def test_states_that_differ_only_in_tool_order_are_not_equal() -> None:
    # The tools' order is part of the state: a model call offers them in it, and the
    # state hash covers it, so equal states must agree on it too.
    first, second = ac.ToolDefinition(name="search"), ac.ToolDefinition(name="fetch")
    one = ac.replay([ac.SessionStarted(timestamp=1, session_id="s", tools=(first, second))])
    other = ac.replay([ac.SessionStarted(timestamp=1, session_id="s", tools=(second, first))])
    assert ac.llm_context(one) != ac.llm_context(other)
    assert one != other
    assert ac.state_hash(one) != ac.state_hash(other)


# --- messages are a sequence in arrival order ---------------------------------------

MERGING = sessions(config=agent_core.testing.agent_configs(user_message_policy=st.sampled_from(("merge", "interrupt"))))


@given(MERGING)
def test_messages_are_the_messages_of_the_inputs_in_the_order_they_arrived(inputs: list[ac.AgentInput]) -> None:
    # Under "merge" and "interrupt" every message enters when its input arrives ("queue" holds some back).
    state = ac.replay(inputs)
    expected: dict[str, tuple[str, str]] = {}
    at = ac.initial_state()
    for inp in inputs:
        before, at = at, ac.transition(at, inp)
        if isinstance(inp, ac.UserMessageReceived):
            expected[inp.message_id] = ("user", inp.content)
        elif isinstance(inp, ac.LlmMessageStarted):
            expected[inp.message_id] = ("assistant", "")
        elif isinstance(inp, ac.LlmMessageCompleted):
            expected[inp.message_id] = ("assistant", inp.content)
        elif isinstance(inp, ac.AnswerRejected) and len(at.messages) > len(before.messages):
            # The note the next model call reads (none when the rejection ended the turn): what was wrong, where.
            note = at.messages[at.message_index[inp.message_id]].content
            assert all(f"at {p.where}: {p.what}" in note for p in inp.problems)
            expected[inp.message_id] = ("user", note)
    assert [(m.id, m.role, m.content) for m in state.messages] == [(i, *rc) for i, rc in expected.items()]
    messages = list(state.messages)
    assert state.messages == tuple(messages) and len(state.messages) == len(messages)
    if messages:
        assert state.messages[-1] == messages[-1] and list(state.messages[-3:]) == messages[-3:]
    requested = [
        i for inp in inputs if isinstance(inp, ac.ReActObserved) for i in getattr(inp.observation, "tool_calls", {})
    ]
    assert list(state.tool_call_log) == requested
