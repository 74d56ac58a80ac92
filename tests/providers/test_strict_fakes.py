"""Thinking, reasoning and compaction go back to the provider as it requires, checked against the strict fakes
through the real SDKs: sessions with tool loops go through without a refusal, and a context whose items were
dropped, altered, moved or attached to another turn is refused the way the real API refuses it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

import agent_core as ac
from effects import MemoryStore, Model, ModelError, load_state, open_session, tool
from effects.providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from effects.testing import (
    FakeProviderServer,
    FakeToolCall,
    ManualClock,
    SequentialIds,
    StrictAnthropicServer,
    StrictResponsesServer,
    Thought,
    openai_reply,
)

from ._providers import KEY

pytestmark = pytest.mark.anyio
THINKING = {"type": "enabled", "budget_tokens": 1024}
Strict = StrictAnthropicServer | StrictResponsesServer


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def two_rounds(prefix: str) -> list[list[Any]]:
    """Think, say something and call; think, call twice with thinking between (interleaved); think and answer."""
    return [
        [Thought("I should add 2 and 3 first."), "Let me add.", FakeToolCall(f"{prefix}1", "add", ['{"a": 2,', ' "b": 3}'])],
        [
            Thought("Now add one, twice."),
            FakeToolCall(f"{prefix}2", "add", ['{"a": 5, "b": 1}']),
            Thought("a secret thought", redacted=True),
            FakeToolCall(f"{prefix}3", "add", ['{"a": 6, "b": 1}']),
        ],
        [Thought("Both done."), "2 + 3 + 1 + 1 = 7."],
    ]  # fmt: skip


def anthropic(fake: StrictAnthropicServer, **options: Any) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=fake.url, api_key=KEY, thinking=THINKING, **options)


def responses(fake: StrictResponsesServer, model: str = "gpt-test", **options: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(model, base_url=fake.url + "/v1", api_key=KEY, **options)


async def converse(model: Model, store: MemoryStore, *questions: str) -> ac.AgentState:
    """Ask the questions one turn after the other in session ``s``; the state after the last turn."""
    async with (
        model,  # type: ignore[attr-defined]
        open_session(store, "s", model, tools=[add], clock=ManualClock(), ids=SequentialIds()) as session,
    ):
        for question in questions:
            session.send(question)
            state = await session.turn_done()
    return state


def logged(store: MemoryStore, session_id: str = "s") -> list[ac.AgentInput]:
    return [ac.decode_input(record.data, format="msgpack") for record in store.read(session_id)]


def after_last_result(store: MemoryStore) -> ac.AgentState:
    """The state when the model is asked again after the second round's results (folded from the log)."""
    inputs = logged(store)
    last = max(i for i, inp in enumerate(inputs) if isinstance(inp, ac.ToolCallCompleted))
    return load_state(store, "s", at=last + 1)


# --- sessions go through ---------------------------------------------------------------------------------


async def test_an_anthropic_tool_loop_with_thinking_goes_through_and_keeps_every_block() -> None:
    store = MemoryStore()
    with StrictAnthropicServer(two_rounds("toolu_")) as fake:
        state = await converse(anthropic(fake), store, "What is 2 + 3 + 1 + 1?")
    assert fake.refusals == []
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    second = fake.requests[1].body["messages"][1]["content"]
    assert [b["type"] for b in second] == ["thinking", "text", "tool_use"]
    third = fake.requests[2].body["messages"][3]["content"]
    assert [b["type"] for b in third] == ["thinking", "tool_use", "redacted_thinking", "tool_use"]
    observed = [i for i in logged(store) if isinstance(i, ac.ReActObserved)]
    kinds = [[item.kind for item in inp.items] for inp in observed]
    assert kinds == [
        ["thinking", "text", "tool-call"],
        ["thinking", "tool-call", "redacted-thinking", "tool-call"],
        ["thinking", "text"],
    ]
    assert observed[0].usage.reasoning_tokens > 0
    assert state.messages[-1].items == observed[-1].items  # the final answer's blocks stay with its message


async def test_anthropic_prompt_caching_reads_what_the_previous_call_wrote() -> None:
    store = MemoryStore()
    with StrictAnthropicServer(two_rounds("toolu_")) as fake:
        await converse(anthropic(fake), store, "What is 2 + 3 + 1 + 1?")
    usages = [i.usage for i in logged(store) if isinstance(i, ac.ReActObserved)]
    assert usages[0].cache_write_tokens > 0 and usages[0].cache_read_tokens == 0
    assert all(u.cache_read_tokens > 0 for u in usages[1:])  # each call reads the prefix the one before wrote
    assert all(u.cache_read_tokens + u.cache_write_tokens <= u.input_tokens for u in usages)


async def test_a_responses_tool_loop_with_reasoning_goes_through_and_sends_everything_back_in_place() -> None:
    store = MemoryStore()
    with StrictResponsesServer(two_rounds("call_")) as fake:
        state = await converse(responses(fake), store, "What is 2 + 3 + 1 + 1?")
    assert fake.refusals == []
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    kinds = [item.get("type") for item in fake.requests[2].body["input"]]
    assert kinds == [
        "message", "reasoning", "message", "function_call", "function_call_output",
        "reasoning", "function_call", "reasoning", "function_call", "function_call_output", "function_call_output",
    ]  # fmt: skip
    assert all(body["store"] is False and "previous_response_id" not in body for body in _bodies(fake))


async def test_a_compaction_item_is_logged_and_sent_back_where_it_stood() -> None:
    store = MemoryStore()
    compaction = [{"type": "compaction", "compact_threshold": 20}]  # the fake compacts past 20 tokens of input
    with StrictResponsesServer([["Hello."], [Thought("Short."), "Hi again."], ["Third."]]) as fake:
        await converse(responses(fake, context_management=compaction), store, "Hi", "And again, please?", "Once more?")
    assert fake.refusals == []
    assert fake.requests[0].body["context_management"] == compaction
    compacted = [i for i in logged(store) if isinstance(i, ac.ReActObserved) and i.items]
    assert [item.kind for item in compacted[0].items] == ["compaction", "reasoning", "text"]
    sent = [item.get("type") for item in fake.requests[-1].body["input"]]
    assert sent[-5:] == ["message", "compaction", "reasoning", "message", "message"]


# --- what the fakes refuse ---------------------------------------------------------------------------


async def _refusal(fake: Strict, model: Model, context: ac.LlmContext) -> str:
    fake.enqueue(["unused"])
    with pytest.raises(ModelError) as info:
        async with model:  # type: ignore[attr-defined]
            await model.complete(context, lambda _: None)
    assert info.value.status in (400, 404)
    return fake.refusals[-1]


def _with_items(context: ac.LlmContext, change: Callable[[list[ac.ContextEntry]], None]) -> ac.LlmContext:
    entries = list(context.entries)
    change(entries)
    return msgspec.structs.replace(context, entries=tuple(entries))


def _groups(entries: list[ac.ContextEntry]) -> list[int]:
    return [i for i, entry in enumerate(entries) if isinstance(entry, ac.ContextToolCalls)]


def _set_items(entries: list[ac.ContextEntry], at: int, items: tuple[ac.ProviderItem, ...]) -> None:
    group = entries[at]
    assert isinstance(group, ac.ContextToolCalls)
    entries[at] = msgspec.structs.replace(group, items=items)


def _items(entries: list[ac.ContextEntry], at: int) -> tuple[ac.ProviderItem, ...]:
    group = entries[at]
    assert isinstance(group, ac.ContextToolCalls)
    return group.items


def _drop_first(entries: list[ac.ContextEntry]) -> None:
    last = _groups(entries)[-1]
    _set_items(entries, last, _items(entries, last)[1:])


def _alter_first(entries: list[ac.ContextEntry]) -> None:
    last = _groups(entries)[-1]
    first, *rest = _items(entries, last)
    data = json.loads(first.data)
    key = "thinking" if "thinking" in data else "encrypted_content"
    data[key] = data[key][:-2] + ("x" if data[key][-2] != "x" else "y") + data[key][-1]
    _set_items(entries, last, (msgspec.structs.replace(first, data=json.dumps(data)), *rest))


def _move_first_after_its_call(entries: list[ac.ContextEntry]) -> None:
    last = _groups(entries)[-1]
    first, marker, *rest = _items(entries, last)
    _set_items(entries, last, (marker, first, *rest))


def _other_turn(entries: list[ac.ContextEntry]) -> None:
    first, last = _groups(entries)[0], _groups(entries)[-1]
    _set_items(entries, last, _items(entries, first)[:1] + _items(entries, last)[1:])


ANTHROPIC_REFUSALS = [
    (_drop_first, "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."),
    (_alter_first, "messages.3.content.0: Invalid `signature` in `thinking` block"),
    (_move_first_after_its_call, "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`"),
    (_other_turn, "messages.3.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message "),
]
RESPONSES_REFUSALS = [
    (
        _drop_first,
        "Item 'fc_2_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_2_0'.",
    ),
    (_alter_first, "The encrypted content for item rs_2_0 could not be verified."),
    (_move_first_after_its_call, "Item 'fc_2_1' of type 'function_call' was provided without its required 'reasoning'"),
    (_other_turn, "Item 'rs_1_0' of type 'reasoning' was provided without its required following item."),
]


@pytest.mark.parametrize(("change", "refusal"), ANTHROPIC_REFUSALS, ids=lambda c: getattr(c, "__name__", ""))
async def test_the_anthropic_fake_refuses_thinking_dropped_altered_moved_or_from_another_turn(
    change: Callable[[list[ac.ContextEntry]], None], refusal: str
) -> None:
    store = MemoryStore()
    with StrictAnthropicServer(two_rounds("toolu_")) as fake:
        await converse(anthropic(fake), store, "What is 2 + 3 + 1 + 1?")
        context = ac.llm_context(after_last_result(store))
        message = await _refusal(fake, anthropic(fake), _with_items(context, change))
    assert message.startswith(refusal)


@pytest.mark.parametrize(("change", "refusal"), RESPONSES_REFUSALS, ids=lambda c: getattr(c, "__name__", ""))
async def test_the_responses_fake_refuses_reasoning_dropped_altered_moved_or_from_another_turn(
    change: Callable[[list[ac.ContextEntry]], None], refusal: str
) -> None:
    store = MemoryStore()
    with StrictResponsesServer(two_rounds("call_")) as fake:
        await converse(responses(fake), store, "What is 2 + 3 + 1 + 1?")
        context = ac.llm_context(after_last_result(store))
        message = await _refusal(fake, responses(fake), _with_items(context, change))
    assert message.startswith(refusal)


async def test_reasoning_sent_without_its_encrypted_content_is_not_found_when_nothing_is_stored() -> None:
    store = MemoryStore()
    with StrictResponsesServer(two_rounds("call_")) as fake:
        await converse(responses(fake), store, "What is 2 + 3 + 1 + 1?")
        context = ac.llm_context(after_last_result(store))

        def strip(entries: list[ac.ContextEntry]) -> None:
            last = _groups(entries)[-1]
            first, *rest = _items(entries, last)
            data = {k: v for k, v in json.loads(first.data).items() if k != "encrypted_content"}
            _set_items(entries, last, (msgspec.structs.replace(first, data=json.dumps(data)), *rest))

        message = await _refusal(fake, responses(fake), _with_items(context, strip))
    assert message == (
        "Item with id 'rs_2_0' not found. Items are not persisted when `store` is set to false. "
        "Try again with `store` set to true, or remove this item from your input."
    )


# --- switching models ------------------------------------------------------------------------------------


async def test_a_session_switched_to_another_provider_sends_text_and_calls_and_leaves_the_items_out() -> None:
    store = MemoryStore()
    with StrictAnthropicServer(two_rounds("toolu_")) as fake:
        await converse(anthropic(fake), store, "What is 2 + 3 + 1 + 1?")
    context = ac.llm_context(after_last_result(store))
    chat = OpenAIModel("gpt-test", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    body = json.dumps(chat._request(context))
    assert "thinking" not in body and "signature" not in body
    with StrictResponsesServer([["Seven."]]) as other:
        model = responses(other)
        assert [i.get("type") for i in model.request_input(context)] == [
            "message", "message", "function_call", "function_call_output",
            "function_call", "function_call", "function_call_output", "function_call_output",
        ]  # fmt: skip


async def test_responses_items_of_another_model_are_left_out_and_the_new_model_accepts_the_rest() -> None:
    store = MemoryStore()
    with StrictResponsesServer(two_rounds("call_")) as fake:
        await converse(responses(fake, model="gpt-a"), store, "What is 2 + 3 + 1 + 1?")
        context = ac.llm_context(after_last_result(store))
        fake.enqueue(["Seven."])
        async with responses(fake, model="gpt-b") as model:
            reply = await model.complete(context, lambda _: None)
    assert (reply.text, fake.refusals) == ("Seven.", [])
    assert "reasoning" not in [i.get("type") for i in fake.requests[-1].body["input"]]


# --- chat completions: reasoning_content ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("send", "in_calls", "in_answer"), [("tool-calls", True, False), ("always", True, True), ("never", False, False)]
)
async def test_chat_reasoning_content_is_kept_and_sent_back_where_the_option_says(
    server: FakeProviderServer, send: str, in_calls: bool, in_answer: bool
) -> None:
    call = FakeToolCall("call_1", "add", ['{"a": 1, "b": 2}'])
    server.enqueue(
        openai_reply([], [call], reasoning=["Adding ", "one and two."]),
        openai_reply(["3."], reasoning=["Easy."]),
        openai_reply(["Bye."]),
    )
    model = OpenAIModel("deepseek-test", base_url=server.url + "/v1", api_key=KEY, send_reasoning=send)  # type: ignore[arg-type]
    store = MemoryStore()
    await converse(model, store, "1 + 2?", "Thanks!")
    [calls] = [m for m in server.requests[1].body["messages"] if m["role"] == "assistant"]  # within the turn
    [answer] = [m for m in server.requests[2].body["messages"] if m["role"] == "assistant"]  # the next turn
    assert ("reasoning_content" in calls, "reasoning_content" in answer) == (in_calls, in_answer)
    if in_calls:
        assert calls["reasoning_content"] == "Adding one and two."
    observed = [i for i in logged(store) if isinstance(i, ac.ReActObserved)]
    assert observed[0].items[0] == ac.ProviderItem(
        kind="reasoning-content",
        provider="openai-chat",
        model="deepseek-test",
        data='{"reasoning_content":"Adding one and two."}',
    )


def _bodies(fake: Strict) -> list[dict[str, Any]]:
    return [request.body for request in fake.requests]
