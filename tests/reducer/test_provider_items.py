"""Provider items on ``re-act-observed``: kept where ``llm_context`` puts them back, checked before they are kept,
and invisible (log bytes, state hashes) to sessions without them."""

from __future__ import annotations

import msgspec
import pytest

import agent_core as ac

from ._build import T0, ask, fold, in_turn, ok, rejected

THINKING = ac.ProviderItem(
    kind="thinking",
    provider="anthropic",
    model="claude-test",
    data='{"type":"thinking","thinking":"hm","signature":"s"}',
)
REDACTED = ac.ProviderItem(
    kind="redacted-thinking", provider="anthropic", data='{"type":"redacted_thinking","data":"x"}'
)


def call_marker(call_id: str) -> ac.ProviderItem:
    return ac.ProviderItem(kind=ac.TOOL_CALL_MARKER, provider="anthropic", ref=call_id)


def text_marker(message_id: str, chars: int) -> ac.ProviderItem:
    return ac.ProviderItem(kind=ac.TEXT_MARKER, provider="anthropic", ref=message_id, chars=chars)


def said(message_id: str, text: str, *, at: int) -> tuple[ac.AgentInput, ac.AgentInput]:
    return (
        ac.LlmMessageStarted(timestamp=at, message_id=message_id),
        ac.LlmMessageCompleted(timestamp=at, message_id=message_id, content=text),
    )


def with_items(inp: ac.ReActObserved, *items: ac.ProviderItem) -> ac.ReActObserved:
    return msgspec.structs.replace(inp, items=items)


def answered(*items: ac.ProviderItem, at: int = T0 + 9) -> ac.ReActObserved:
    return ac.ReActObserved(timestamp=at, called_llm_at=at, observation=ac.CompleteReAct(), items=items)


def test_a_batch_s_items_are_held_by_its_first_call_and_come_back_with_the_batch() -> None:
    items = (THINKING, text_marker("a1", 9), call_marker("t1"), REDACTED, call_marker("t2"))
    state = fold(
        in_turn(), *said("a1", "Checking.", at=T0 + 2), with_items(ask(at=T0 + 3, t1="search", t2="fetch"), *items)
    )
    assert state.tool_calls["t1"].items == items
    assert state.tool_calls["t2"].items == ()
    state = fold(state, ok("t1", at=T0 + 4), ok("t2", at=T0 + 5))
    group = next(e for e in ac.llm_context(state).entries if isinstance(e, ac.ContextToolCalls))
    assert group.items == items


def test_a_final_answer_s_items_go_on_its_message() -> None:
    items = (THINKING, text_marker("a1", 5))
    state = fold(in_turn(), *said("a1", "Done.", at=T0 + 2), answered(*items, at=T0 + 3))
    assert state.messages[-1].items == items
    assert ac.llm_context(state).entries[-1] == ac.ContextMessage(role="assistant", content="Done.", items=items)


def test_a_batch_refused_by_a_guard_keeps_its_items() -> None:
    state = fold(in_turn(max_tool_calls=1), with_items(ask(at=T0 + 2, t1="search", t2="fetch"), THINKING))
    assert state.tool_calls["t1"].items == (THINKING,)
    assert state.last_outcome is not None and state.last_outcome.reason == "max-tool-calls"


def test_sessions_without_items_keep_their_bytes_and_hashes() -> None:
    plain = fold(in_turn(), *said("a1", "Hi.", at=T0 + 2), answered(at=T0 + 3))
    observed = answered(at=T0 + 3)
    assert b"items" not in ac.encode_input(observed)
    assert b"items" not in ac.encode_state(plain)
    assert b"cache_read_tokens" not in ac.encode_input(
        msgspec.structs.replace(observed, usage=ac.Usage(input_tokens=3))
    )


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            (with_items(ask(at=T0 + 3, t1="search"), THINKING, call_marker("t9")),),
            "items[1] marks tool call 't9'; expected a call of this batch, named once",
        ),
        (
            (with_items(ask(at=T0 + 3, t1="search"), call_marker("t1"), call_marker("t1")),),
            "items[1] marks tool call 't1'; expected a call of this batch, named once",
        ),
        ((answered(THINKING, call_marker("t1")),), "items[1] marks tool call 't1'; expected no tool-call marker"),
        ((answered(THINKING),), "a complete-re-act's items need a text marker naming the message they belong with"),
        (
            (answered(THINKING, text_marker("u1", 18)),),
            "the text markers name 'u1'; expected a completed assistant message",
        ),
        (
            (*said("a1", "Done.", at=T0 + 2), answered(THINKING, text_marker("a1", 4))),
            "the text markers cover 4 characters; message 'a1' has 5",
        ),
        (
            (*said("a1", "Done.", at=T0 + 2), answered(text_marker("a1", 2), text_marker("u1", 3))),
            "items[1] names message 'u1'; the reply's text is in 'a1'",
        ),
        (
            (answered(ac.ProviderItem(kind="", provider="anthropic")),),
            "items[0] has an empty kind or provider; expected both (e.g. 'thinking', 'anthropic')",
        ),
        (
            (answered(ac.ProviderItem(kind="thinking", provider="anthropic", data="x" * (ac.MAX_ITEM_CHARS + 1))),),
            f"items[0] holds {ac.MAX_ITEM_CHARS + 1} characters; at most {ac.MAX_ITEM_CHARS} are kept",
        ),
        (
            (answered(*[THINKING] * (ac.MAX_REPLY_ITEMS + 1)),),
            f"the reply carries {ac.MAX_REPLY_ITEMS + 1} items; at most {ac.MAX_REPLY_ITEMS} are kept",
        ),
    ],
)
def test_items_that_do_not_fit_the_reply_are_refused(inputs: tuple[ac.AgentInput, ...], message: str) -> None:
    state = fold(in_turn(), *inputs[:-1])
    rejection = rejected(state, inputs[-1])
    assert (rejection.code, rejection.guard, rejection.message) == ("bad-items", "items-fit-the-reply", message)


def test_all_items_of_a_reply_together_are_bounded() -> None:
    big = ac.ProviderItem(kind="reasoning", provider="openai-responses", data="x" * ac.MAX_ITEM_CHARS)
    count = ac.MAX_REPLY_ITEM_CHARS // ac.MAX_ITEM_CHARS + 1
    rejection = rejected(in_turn(), answered(*[big] * count))
    assert rejection.message == (
        f"the reply's items hold {count * ac.MAX_ITEM_CHARS} characters; at most {ac.MAX_REPLY_ITEM_CHARS} are kept"
    )


def test_a_message_takes_the_items_of_one_model_call_only() -> None:
    state = fold(in_turn(), *said("a1", "Done.", at=T0 + 2), answered(THINKING, text_marker("a1", 5), at=T0 + 3))
    state = fold(state, ac.UserMessageReceived(timestamp=T0 + 4, message_id="u2", content="And?"))
    rejection = rejected(state, answered(REDACTED, text_marker("a1", 5), at=T0 + 5))
    assert rejection.message == "message 'a1' already carries the items of an earlier model call"


@pytest.mark.parametrize(
    "usage",
    [
        ac.Usage(input_tokens=10, cache_read_tokens=8, cache_write_tokens=3),
        ac.Usage(output_tokens=2, reasoning_tokens=3),
        ac.Usage(input_tokens=10, cache_read_tokens=-1),
    ],
)
def test_usage_breakdowns_must_lie_within_their_totals(usage: ac.Usage) -> None:
    rejection = rejected(in_turn(), msgspec.structs.replace(answered(at=T0 + 2), usage=usage))
    assert (rejection.code, rejection.guard) == ("usage-parts", "usage-parts-within-totals")
    assert rejection.message.startswith("expected cache_read_tokens and cache_write_tokens (0 or more) to add up to")


def test_usage_breakdowns_leave_budgets_on_the_totals() -> None:
    usage = ac.Usage(
        input_tokens=100, output_tokens=40, cache_read_tokens=60, cache_write_tokens=30, reasoning_tokens=25
    )
    state = fold(in_turn(), msgspec.structs.replace(ask(at=T0 + 2, t1="search"), usage=usage))
    assert state.turn is not None and state.turn.tokens == 140
    assert (state.input_tokens, state.output_tokens) == (100, 40)
