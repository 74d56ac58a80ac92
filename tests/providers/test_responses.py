"""OpenAIResponsesModel against a scripted Responses-API server: the request it sends and the events it folds.

The error table, hostile streams and secrets are checked with the other adapters (``_providers.PROVIDERS``);
what comes back to the server after reasoning and compaction is checked against the strict fake in
``test_strict_fakes.py``.
"""

from __future__ import annotations

import json
import sys

import msgspec
import pytest
from install_hint import editable_install

import agent_core as ac
from effects import ModelError, ModelReply, ModelToolCall
from effects.providers import MissingExtra, OpenAIResponsesModel
from effects.testing import FakeProviderServer, FakeToolCall, Reply, responses_reply, sse

from ._conversation import GET_TIME, SYSTEM, context, first_question
from ._providers import KEY, complete

pytestmark = pytest.mark.anyio


def model(server: FakeProviderServer, **options: object) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-test", base_url=server.url + "/v1", api_key=KEY, **options)  # type: ignore[arg-type]


async def test_the_request_sends_the_whole_context_and_stores_nothing(server: FakeProviderServer) -> None:
    server.enqueue(responses_reply(["Paris: 14:05."]))
    await complete(model(server, temperature=0.2, max_output_tokens=300), context())
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    body = request.body
    assert body["instructions"] == SYSTEM
    assert body["input"] == [
        {"type": "message", "role": "assistant", "content": "Hello."},
        {"type": "message", "role": "user", "content": "Who are you?"},
        {"type": "message", "role": "assistant", "content": "An agent."},
        {"type": "message", "role": "user", "content": "What time is it in Paris and on Mars?"},
        {"type": "message", "role": "assistant", "content": "Let me check both."},
        {"type": "function_call", "call_id": "call_paris", "name": "get_time", "arguments": '{"timezone":"Europe/Paris"}'},
        {"type": "function_call", "call_id": "call_mars", "name": "get_time", "arguments": '{"timezone":"Mars/Olympus"}'},
        {"type": "function_call_output", "call_id": "call_paris", "output": "14:05"},
        {"type": "function_call_output", "call_id": "call_mars", "output": "Error: unknown timezone"},
    ]  # fmt: skip
    assert body["tools"][0] == {
        "type": "function",
        "name": "get_time",
        "description": "The current time in a timezone.",
        "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
        "strict": False,
    }
    assert [tool["name"] for tool in body["tools"]] == ["get_time", "delete_file", "load_older_messages"]
    assert (body["store"], body["include"], body["stream"]) == (False, ["reasoning.encrypted_content"], True)
    assert "previous_response_id" not in body
    assert (body["model"], body["temperature"], body["max_output_tokens"]) == ("gpt-test", 0.2, 300)


async def test_reasoning_and_compaction_options_are_sent_as_given(server: FakeProviderServer) -> None:
    server.enqueue(responses_reply(["Noon."]))
    compaction = [{"type": "compaction", "compact_threshold": 200_000}]
    await complete(model(server, reasoning={"effort": "high"}, context_management=compaction), first_question())
    body = server.requests[0].body
    assert (body["reasoning"], body["context_management"]) == ({"effort": "high"}, compaction)
    assert "instructions" not in body


async def test_text_calls_split_arguments_and_usage_are_folded(server: FakeProviderServer) -> None:
    calls = [FakeToolCall("call_1", "get_time", ['{"timezone": ', '"UTC"}'])]
    server.enqueue(responses_reply(["It is ", "noon."], calls, usage=(40, 9)))
    deltas: list[str] = []
    reply = await complete(model(server), first_question(), deltas.append)
    assert deltas == ["It is ", "noon."]
    assert reply == ModelReply(
        text="It is noon.",
        tool_calls=(ModelToolCall(id="call_1", name="get_time", arguments='{"timezone": "UTC"}'),),
        usage=ac.Usage(input_tokens=40, output_tokens=9),
        finish_reason="completed",
    )  # no opaque item: no items, and the log of a model without them does not change


def _stream(*items: dict[str, object], usage: dict[str, object] | None = None) -> Reply:
    events = [sse({"type": "response.created", "sequence_number": 0, "response": {"id": "r", "status": "in_progress"}})]
    for index, item in enumerate(items):
        events.append(sse({"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            text = item["content"][0]["text"]  # type: ignore[index]
            delta = {"item_id": item["id"], "output_index": index, "content_index": 0, "delta": text, "logprobs": []}
            events.append(sse({"type": "response.output_text.delta", **delta}))
        events.append(sse({"type": "response.output_item.done", "output_index": index, "item": item}))
    done = {"id": "r", "status": "completed", "output": list(items), "usage": usage or {}}
    events.append(sse({"type": "response.completed", "sequence_number": 9, "response": done}))
    return Reply.stream(events)


REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-opaque"}
COMPACTION = {"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAAA-compacted"}
MESSAGE = {
    "id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "phase": "commentary",
    "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
}  # fmt: skip
CALL = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "get_time",
        "arguments": "{}"}  # fmt: skip


async def test_reasoning_and_compaction_items_are_kept_whole_in_order_with_markers(
    server: FakeProviderServer,
) -> None:
    usage = {
        "input_tokens": 1000, "input_tokens_details": {"cached_tokens": 800},
        "output_tokens": 120, "output_tokens_details": {"reasoning_tokens": 100},
    }  # fmt: skip
    server.enqueue(_stream(COMPACTION, REASONING, MESSAGE, CALL, usage=usage))
    reply = await complete(model(server), first_question())
    assert (reply.text, [c.id for c in reply.tool_calls]) == ("Checking.", ["call_1"])
    assert reply.usage == ac.Usage(input_tokens=1000, output_tokens=120, cache_read_tokens=800, reasoning_tokens=100)
    assert [(i.kind, i.provider, i.model, i.ref, i.chars) for i in reply.items] == [
        ("compaction", "openai-responses", "gpt-test", "", 0),
        ("reasoning", "openai-responses", "gpt-test", "", 0),
        ("text", "openai-responses", "gpt-test", "", 9),
        ("tool-call", "openai-responses", "gpt-test", "call_1", 0),
    ]
    # Each item's fields and values as the server sent them; a marker holds what the log keeps nowhere else.
    assert [json.loads(item.data) for item in reply.items] == [
        COMPACTION,
        REASONING,
        {k: v for k, v in MESSAGE.items() if k != "content"},
        {"id": "fc_1", "type": "function_call", "status": "completed"},
    ]


async def test_items_go_back_where_they_stood_and_only_to_the_model_that_made_them(
    server: FakeProviderServer,
) -> None:
    server.enqueue(_stream(REASONING, MESSAGE, CALL))
    reply = await complete(model(server), first_question())
    calls = {"call_1": ac.ToolCallRequest(name="get_time", parameters="{}")}
    items = tuple(as_logged(item) for item in reply.items)
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", tools=(GET_TIME,)),
            ac.UserMessageReceived(timestamp=2, message_id="u", content="What time is it?"),
            ac.LlmMessageStarted(timestamp=3, message_id="a"),
            ac.LlmMessageCompleted(timestamp=3, message_id="a", content="Checking."),
            ac.ReActObserved(timestamp=4, called_llm_at=2, observation=ac.ContinueReAct(tool_calls=calls), items=items),
            ac.ToolCallStarted(timestamp=5, tool_call_id="call_1"),
            ac.ToolCallCompleted(timestamp=6, tool_call_id="call_1", result=ac.ToolSuccess(content="noon")),
        ]
    )
    sent = model(server).request_input(ac.llm_context(state))
    assert sent == [
        {"type": "message", "role": "user", "content": "What time is it?"},
        REASONING,
        MESSAGE,
        CALL,
        {"type": "function_call_output", "call_id": "call_1", "output": "noon"},
    ]
    other = OpenAIResponsesModel("gpt-other", base_url=server.url + "/v1", api_key=KEY)
    assert other.request_input(ac.llm_context(state)) == [
        {"type": "message", "role": "user", "content": "What time is it?"},
        {"type": "message", "role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_1", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "noon"},
    ]


def as_logged(item: ac.ProviderItem) -> ac.ProviderItem:
    """The item as the runner logs it: a text marker names the message that holds the text."""
    return msgspec.structs.replace(item, ref="a") if item.kind == "text" else item


@pytest.mark.parametrize(
    ("event", "retryable"),
    [
        ({"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}}}, True),
        ({"type": "response.failed", "response": {"status": "failed", "error": {"code": "invalid_prompt", "message": "no"}}}, False),
        ({"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "sequence_number": 1}, True),
    ],
    ids=["server-error", "invalid-prompt", "error-event"],
)  # fmt: skip
async def test_a_failed_response_is_a_model_error_retryable_as_its_code_says(
    server: FakeProviderServer, event: dict[str, object], retryable: bool
) -> None:
    server.enqueue(Reply.stream([sse({"type": "response.created", "response": {"id": "r"}}), sse(event)]))
    with pytest.raises(ModelError) as info:
        await complete(model(server), first_question())
    assert info.value.retryable is retryable
    assert str(info.value).startswith(f"OpenAI Responses request to {server.url}/v1/: the response failed (")


async def test_a_refusal_completes_with_the_content_filter_marker(server: FakeProviderServer) -> None:
    server.enqueue(responses_reply(["I can't help with that."], status="refusal"))
    reply = await complete(model(server), first_question())
    assert reply.text == (
        "I can't help with that.\n\n[answer stopped by the provider's content filter (status: refusal)]"
    )


def test_without_the_extra_construction_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtra) as info:
        OpenAIResponsesModel("gpt-test", api_key=KEY)
    assert str(info.value) == (
        "OpenAIResponsesModel needs the 'openai' extra of agent-core, which is not installed "
        "(import failed: import of openai halted; None in sys.modules); "
        f"install it with: {editable_install('openai')}"
    )


def test_without_a_key_or_url_construction_says_what_to_set() -> None:
    with pytest.raises(ValueError) as info:
        OpenAIResponsesModel("gpt-test")
    assert str(info.value).startswith("OpenAIResponsesModel needs an API key: pass api_key=... or set OPENAI_API_KEY")
