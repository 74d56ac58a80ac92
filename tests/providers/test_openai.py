"""OpenAIModel against a scripted chat-completions server: the request it sends and the reply it folds."""

from __future__ import annotations

import sys

import anyio
import msgspec
import pytest
from install_hint import editable_install

from agent_core import LlmContext
from effects import ModelReply, ModelToolCall, TextSink
from effects.providers import MissingExtra, OpenAIModel
from effects.testing import HOLD, FakeProviderServer, Reply, openai_reply, openai_stream

from ._conversation import SYSTEM, context, first_question
from .conftest import recorded

pytestmark = pytest.mark.anyio


def model(server: FakeProviderServer, **options: object) -> OpenAIModel:
    return OpenAIModel("gpt-test", base_url=server.url + "/v1", api_key="sk-test", **options)  # type: ignore[arg-type]


async def complete(adapter: OpenAIModel, request: LlmContext, on_text: TextSink = lambda _: None) -> ModelReply:
    """One call, closing the adapter's connections afterwards."""
    async with adapter:
        return await adapter.complete(request, on_text)


async def test_the_request_carries_messages_tool_calls_results_and_tools(server: FakeProviderServer) -> None:
    server.enqueue(openai_reply(["Paris: 14:05."]))
    await complete(model(server, temperature=0.2, max_tokens=300), context())

    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Who are you?"},
        {"role": "assistant", "content": "An agent."},
        {"role": "user", "content": "What time is it in Paris and on Mars?"},
        {
            "role": "assistant",
            "content": "Let me check both.",
            "tool_calls": [
                {"id": "call_paris", "type": "function", "function": {"name": "get_time", "arguments": '{"timezone":"Europe/Paris"}'}},
                {"id": "call_mars", "type": "function", "function": {"name": "get_time", "arguments": '{"timezone":"Mars/Olympus"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_paris", "content": "14:05"},
        {"role": "tool", "tool_call_id": "call_mars", "content": "Error: unknown timezone"},
    ]  # fmt: skip
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_time", "delete_file", "load_older_messages"]
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The current time in a timezone.",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
        },
    }
    assert (body["model"], body["stream"], body["stream_options"]) == ("gpt-test", True, {"include_usage": True})
    assert (body["temperature"], body["max_tokens"]) == (0.2, 300)


async def test_without_tools_the_request_has_no_tools_field(server: FakeProviderServer) -> None:
    server.enqueue(openai_reply(["Fine."]))
    final_answer = msgspec.structs.replace(first_question(), tools=(), tools_enabled=False)
    await complete(model(server), final_answer)
    assert "tools" not in server.requests[0].body
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "What time is it in Paris?"}]


async def test_parallel_tool_calls_with_split_arguments_are_joined_by_index(server: FakeProviderServer) -> None:
    server.enqueue(Reply.recorded(recorded("openai_parallel_tool_calls.sse")))
    reply = await complete(model(server), first_question())
    assert reply == ModelReply(
        text="",
        tool_calls=(
            ModelToolCall(
                id="call_Qb8C5dLqS3yVv2Xw1kM7eTnA", name="get_time", arguments='{"timezone": "Europe/Paris"}'
            ),
            ModelToolCall(id="call_7HnTzR4pWm0sKc1Yd9BfLxGe", name="get_time", arguments='{"timezone": "Asia/Tokyo"}'),
        ),
        usage=msgspec.convert({"input_tokens": 96, "output_tokens": 52}, type(reply.usage)),
        finish_reason="tool_calls",
    )


@pytest.mark.parametrize(
    ("transcript", "ids"),
    [
        ("ollama_tool_calls_without_index.sse", ("call_m7pqvbzv", "call_0a5e1x2k")),
        ("ollama_tool_calls_all_index_0.sse", ("call_x1xsd7cq", "call_u9c2bl4r")),
    ],
)
async def test_servers_that_omit_or_repeat_the_index_still_give_separate_calls(
    server: FakeProviderServer, transcript: str, ids: tuple[str, str]
) -> None:
    server.enqueue(Reply.recorded(recorded(transcript)))
    reply = await complete(model(server), first_question())
    assert reply.tool_calls == (
        ModelToolCall(id=ids[0], name="get_time", arguments='{"timezone":"Europe/Paris"}'),
        ModelToolCall(id=ids[1], name="get_time", arguments='{"timezone":"Asia/Tokyo"}'),
    )


async def test_a_single_chunk_call_without_index_is_read_whole(server: FakeProviderServer) -> None:
    server.enqueue(Reply.recorded(recorded("gemini_tool_call_without_index.sse")))
    reply = await complete(model(server), first_question())
    assert reply.tool_calls == (
        ModelToolCall(
            id="function-call-13017526425373766171", name="get_time", arguments='{"timezone":"Europe/Paris"}'
        ),
    )
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.finish_reason) == (77, 18, "tool_calls")


async def test_a_reply_with_text_and_a_tool_call_yields_both(server: FakeProviderServer) -> None:
    server.enqueue(Reply.recorded(recorded("openai_text_then_tool_call.sse")))
    deltas: list[str] = []
    reply = await complete(model(server), first_question(), deltas.append)
    assert deltas == ["Let", " me look", " that up."]
    assert reply.text == "Let me look that up."
    assert reply.tool_calls == (
        ModelToolCall(id="chatcmpl-tool-8f2b9a41c7d04e5b", name="get_time", arguments='{"timezone": "UTC"}'),
    )
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.finish_reason) == (301, 30, "tool_calls")


async def test_text_reaches_on_text_while_the_stream_is_still_open(server: FakeProviderServer) -> None:
    events = openai_stream(["It is ", "noon."])
    server.enqueue(Reply.stream([*events[:2], HOLD, *events[2:]]))
    first_delta = anyio.Event()
    deltas: list[str] = []

    def on_text(delta: str) -> None:
        deltas.append(delta)
        first_delta.set()

    replies: list[ModelReply] = []
    async with anyio.create_task_group() as group:

        async def call() -> None:
            replies.append(await complete(model(server), first_question(), on_text))

        group.start_soon(call)
        await first_delta.wait()
        assert (deltas, replies) == (["It is "], [])
        server.release()
    assert replies[0].text == "It is noon."
    assert replies[0].finish_reason == "stop"


async def test_a_tool_call_without_arguments_gets_an_empty_object(server: FakeProviderServer) -> None:
    from effects.testing import FakeToolCall

    server.enqueue(openai_reply(tool_calls=[FakeToolCall("c1", "list_files", ())]))
    reply = await complete(model(server), first_question())
    assert reply.tool_calls == (ModelToolCall(id="c1", name="list_files", arguments="{}"),)


def test_key_and_url_come_from_the_environment_like_the_sdk(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.enqueue(openai_reply(["ok"]))
    reply = anyio.run(complete, OpenAIModel("gpt-test"), first_question())
    assert reply.text == "ok"
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_a_local_server_needs_no_key(server: FakeProviderServer) -> None:
    server.enqueue(openai_reply(["ok"]))
    reply = anyio.run(complete, OpenAIModel("llama", base_url=server.url + "/v1"), first_question())
    assert reply.text == "ok"


def test_without_key_or_url_construction_says_what_to_set() -> None:
    with pytest.raises(ValueError) as info:
        OpenAIModel("gpt-test")
    assert str(info.value) == (
        "OpenAIModel needs an API key: pass api_key=... or set OPENAI_API_KEY "
        "(a local server that needs no key only needs base_url=... or OPENAI_BASE_URL)"
    )


def test_without_the_extra_construction_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what Python does for a package that is not installed
    with pytest.raises(MissingExtra) as info:
        OpenAIModel("gpt-test", api_key="sk-test")
    assert str(info.value) == (
        "OpenAIModel needs the 'openai' extra of agent-core, which is not installed "
        "(import failed: import of openai halted; None in sys.modules); "
        f"install it with: {editable_install('openai')}"
    )
