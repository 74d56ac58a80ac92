"""The scripted model: deterministic replies, streaming, parallel calls, failures, usage."""

from __future__ import annotations

import anyio
import pytest

from agent_core import ContextMessage, LlmContext, Usage
from effects import LOAD_OLDER_MESSAGES, LOAD_TOOL_CALL_RESULTS, ModelError, ModelReply, ModelToolCall
from effects.testing import ScriptedModel, call_tools, fail, load_older_messages, load_tool_call_results, say

CONTEXT = LlmContext(
    system_prompt="", entries=(ContextMessage(role="user", content="hi"),), tools=(), tools_enabled=True
)


async def ask(model: ScriptedModel, context: LlmContext = CONTEXT) -> tuple[ModelReply, list[str]]:
    chunks: list[str] = []
    reply = await model.complete(context, chunks.append)
    return reply, chunks


@pytest.mark.anyio
async def test_text_streams_in_word_sized_chunks_and_the_reply_carries_it_whole() -> None:
    reply, chunks = await ask(ScriptedModel([say("Hello there, world.")]))
    assert chunks == ["Hello ", "there, ", "world."]
    assert reply.text == "Hello there, world."
    assert reply.tool_calls == ()


@pytest.mark.anyio
async def test_fixed_size_chunks() -> None:
    _, chunks = await ask(ScriptedModel([say("abcdefg")], chunk_size=3))
    assert chunks == ["abc", "def", "g"]


@pytest.mark.anyio
async def test_parallel_tool_calls_get_sequential_ids_across_replies() -> None:
    model = ScriptedModel(
        [call_tools(("add", {"a": 1}), ("add", '{"a": 2')), call_tools(("mul", {}, "mine"), ("mul", {}))]
    )
    first, _ = await ask(model)
    second, _ = await ask(model)
    assert first.tool_calls == (
        ModelToolCall(id="call-1", name="add", arguments='{"a":1}'),
        ModelToolCall(id="call-2", name="add", arguments='{"a": 2'),
    )
    assert second.tool_calls == (
        ModelToolCall(id="mine", name="mul", arguments="{}"),
        ModelToolCall(id="call-3", name="mul", arguments="{}"),
    )


@pytest.mark.anyio
async def test_a_failure_step_raises_and_is_consumed() -> None:
    model = ScriptedModel([fail("rate limited", retry_after_ms=500), say("ok")])
    with pytest.raises(ModelError) as raised:
        await ask(model)
    assert (str(raised.value), raised.value.retryable, raised.value.retry_after_ms) == ("rate limited", True, 500)
    reply, _ = await ask(model)
    assert reply.text == "ok"
    assert model.steps_left == 0


@pytest.mark.anyio
async def test_usage_is_estimated_unless_given() -> None:
    estimated, _ = await ask(ScriptedModel([say("12345678")]))
    given, _ = await ask(ScriptedModel([say("x", usage=Usage(input_tokens=7, output_tokens=1))]))
    assert estimated.usage.output_tokens == 2
    assert estimated.usage.input_tokens > 0
    assert given.usage == Usage(input_tokens=7, output_tokens=1)
    off, _ = await ask(ScriptedModel([say("x")], estimate_usage=False))
    assert off.usage == Usage()


@pytest.mark.anyio
async def test_a_function_script_sees_every_context() -> None:
    def script(context: LlmContext) -> ModelReply:
        last = context.entries[-1]
        assert isinstance(last, ContextMessage)
        return say(f"you said {last.content}")

    model = ScriptedModel(script)
    reply, _ = await ask(model)
    assert reply.text == "you said hi"
    assert model.calls == [CONTEXT]
    assert model.steps_left is None


@pytest.mark.anyio
async def test_a_step_may_be_a_function_of_the_context() -> None:
    model = ScriptedModel([lambda context: say(f"{len(context.entries)} entries")])
    reply, _ = await ask(model)
    assert reply.text == "1 entries"


@pytest.mark.anyio
async def test_a_call_cancelled_while_streaming_leaves_its_step_for_the_next_call() -> None:
    model = ScriptedModel([say("one two three"), say("next")])
    with anyio.CancelScope() as scope:

        def cancel_at_first_chunk(chunk: str) -> None:
            scope.cancel()

        await model.complete(CONTEXT, cancel_at_first_chunk)
    assert scope.cancelled_caught
    reply, _ = await ask(model)
    assert reply.text == "one two three"


@pytest.mark.anyio
async def test_an_exhausted_script_says_how_to_fix_it() -> None:
    model = ScriptedModel([say("only")])
    await ask(model)
    with pytest.raises(RuntimeError, match=r"the scripted model has no step left: its script has 1 steps"):
        await ask(model)


@pytest.mark.anyio
async def test_a_step_of_the_wrong_type_is_refused() -> None:
    model = ScriptedModel([lambda context: "hello"])  # type: ignore[list-item, return-value]
    with pytest.raises(TypeError, match=r"expected a script step to give a ModelReply or an exception, got str"):
        await ask(model)


def test_internal_tool_helpers_call_the_internal_tools() -> None:
    assert load_older_messages().tool_calls[0].name == LOAD_OLDER_MESSAGES
    recall = load_tool_call_results("a", "b").tool_calls[0]
    assert (recall.name, recall.arguments) == (LOAD_TOOL_CALL_RESULTS, '{"tool_call_ids":["a","b"]}')


def test_call_tools_needs_a_call() -> None:
    with pytest.raises(ValueError, match=r"call_tools needs at least one"):
        call_tools()
