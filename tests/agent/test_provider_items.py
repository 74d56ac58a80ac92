"""A model reply's provider items as the runner logs them: markers naming the ids it logs, bounded, never
holding a secret, and left out where nothing in the conversation stands with them."""

from __future__ import annotations

import anyio
import msgspec
import pytest

import agent_core as ac
from effects import REDACTED, Agent, ModelReply, ModelToolCall
from effects.testing import ManualClock, ScriptedModel, SequentialIds, load_older_messages, say

from ._helpers import START

THOUGHT = '{"type":"thinking","thinking":"hmm","signature":"sig"}'


def item(kind: str, *, data: str = "", ref: str = "", chars: int = 0) -> ac.ProviderItem:
    return ac.ProviderItem(kind=kind, provider="anthropic", model="claude-test", data=data, ref=ref, chars=chars)


def thought(data: str = THOUGHT) -> ac.ProviderItem:
    return item("thinking", data=data)


def calls(*ids: str) -> ModelReply:
    """A reply that thinks, says ``Checking.`` and calls ``echo`` once per id (the provider's ids)."""
    return ModelReply(
        text="Checking.",
        tool_calls=tuple(ModelToolCall(id=i, name="echo", arguments="{}") for i in ids),
        items=(thought(), item("text", chars=9), *(item("tool-call", ref=i) for i in ids)),
        finish_reason="tool_use",
    )


async def echo() -> str:
    """Answers ``ok``."""
    return "ok"


def run(script: list[object], *, secrets: tuple[str, ...] = (), turns: int = 1) -> ac.AgentState:
    async def main() -> ac.AgentState:
        model = ScriptedModel(script)  # type: ignore[arg-type]
        clock = ManualClock(START)
        agent = Agent(model, tools=[echo], clock=clock, ids=SequentialIds(), secrets=secrets)
        async with agent.running() as session:
            for n in range(turns):
                session.send(f"question {n}")
                await session.settled()
                while session.state.turn is not None:  # a retry's backoff passes on the manual clock
                    clock.advance(60_000)
                    await session.settled()
        return session.state

    return anyio.run(main)


def observed(state: ac.AgentState) -> list[ac.ProviderItem]:
    first = state.tool_calls[state.tool_call_log[0]]
    return list(first.items)


def test_markers_name_the_logged_call_ids_and_the_message_holding_the_text() -> None:
    # The second reply repeats the provider ids of the first: the runner logs them as call_1-2, call_2-2.
    state = run([calls("call_1", "call_2"), calls("call_1", "call_2"), say("Done.")])
    second = state.tool_calls["call_1-2"].items
    message = next(m for m in reversed(state.messages) if m.content == "Checking.")
    assert [(i.kind, i.ref) for i in second] == [
        ("thinking", ""),
        ("text", message.id),
        ("tool-call", "call_1-2"),
        ("tool-call", "call_2-2"),
    ]
    assert state.tool_calls["call_2-2"].items == ()


def test_a_final_answer_s_items_stay_with_its_message() -> None:
    answer = ModelReply(text="Done.", items=(thought(), item("text", chars=5)), finish_reason="end_turn")
    state = run([answer])
    assert state.messages[-1].items == (thought(), item("text", ref=state.messages[-1].id, chars=5))


def test_items_of_a_reply_with_neither_text_nor_calls_are_not_kept() -> None:
    # An empty answer: the model is asked again (with a note), and its thinking is not kept.
    state = run([ModelReply(items=(thought(),), finish_reason="end_turn"), say("Done.")])
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert all(not m.items for m in state.messages)


def test_items_of_a_reply_calling_an_internal_tool_are_not_part_of_history() -> None:
    internal = msgspec.structs.replace(
        load_older_messages(),
        items=(thought(), item("tool-call", ref="call-x")),
        tool_calls=(ModelToolCall(id="call-x", name="load_older_messages", arguments="{}"),),
    )
    state = run([say("a"), say("b"), internal, say("c")], turns=3)
    assert all(not m.items for m in state.messages)


def test_a_reply_without_opaque_items_logs_no_items() -> None:
    markers_only = msgspec.structs.replace(
        calls("call_1"), items=(item("text", chars=9), item("tool-call", ref="call_1"))
    )
    state = run([markers_only, say("Done.")])
    assert observed(state) == []


@pytest.mark.parametrize(
    ("items", "error"),
    [
        (
            (item("thinking", data="x" * (ac.MAX_ITEM_CHARS + 1)), item("text", chars=5)),
            f"the model's reply carries a thinking item of {ac.MAX_ITEM_CHARS + 1} characters; at most "
            f"{ac.MAX_ITEM_CHARS} are kept per item.",
        ),
        (
            (thought(), item("text", chars=4)),
            "the model adapter's reply marks 0 tool calls and 4 characters of text among its provider items, but "
            "has 0 tool calls and 5 characters;",
        ),
    ],
    ids=["too-large", "miscounted"],
)
def test_items_that_cannot_be_kept_fail_the_call_visibly(items: tuple[ac.ProviderItem, ...], error: str) -> None:
    state = run([ModelReply(text="Done.", items=items, finish_reason="end_turn")])
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "llm-error")
    assert error in outcome.detail and "Not retryable" in outcome.detail


SECRET = "s3cret-value-42"


def test_a_secret_in_the_text_is_redacted_and_the_markers_count_the_redacted_text() -> None:
    text = f"Key {SECRET}."
    thinking_then_text = (item("text", chars=4), thought(), item("text", chars=len(text) - 4))
    state = run([ModelReply(text=text, items=thinking_then_text, finish_reason="end_turn")], secrets=(SECRET,))
    message = state.messages[-1]
    assert message.content == f"Key {REDACTED}."
    assert [(i.kind, i.chars) for i in message.items] == [("text", 4), ("thinking", 0), ("text", len(REDACTED) + 1)]


def test_a_secret_inside_a_kept_item_fails_the_call_and_the_model_is_asked_again() -> None:
    leaked = thought(THOUGHT.replace("hmm", SECRET))
    script = [ModelReply(text="Done.", items=(leaked, item("text", chars=5)), finish_reason="end_turn"), say("Again.")]
    state = run(script, secrets=(SECRET,))
    assert state.messages[-1].content == "Again."
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert SECRET not in ac.encode_state(state).decode()
