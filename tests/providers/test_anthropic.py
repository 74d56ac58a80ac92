"""AnthropicModel against a scripted messages-API server: the request it sends and the events it folds."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from install_hint import editable_install

import agent_core as ac
from agent_core import Usage
from effects import ModelError, ModelReply, ModelToolCall
from effects.providers import AnthropicModel, MissingExtra
from effects.testing import HOLD, FakeProviderServer, Reply, anthropic_stream, sse

from ._conversation import GET_TIME, SYSTEM, context, first_question
from ._providers import KEY, complete
from .conftest import recorded

pytestmark = pytest.mark.anyio


def model(server: FakeProviderServer, **options: object) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.url, api_key=KEY, **options)  # type: ignore[arg-type]


async def test_the_request_pairs_tool_uses_with_results_in_a_user_message(server: FakeProviderServer) -> None:
    server.enqueue(Reply.stream(anthropic_stream(["Paris: 14:05."])))
    await complete(model(server, temperature=0.3, max_tokens=500), context())

    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    body = request.body
    cache = {"type": "ephemeral"}  # the default breakpoints: system prompt, last tool, last block
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": cache}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "(Earlier messages of this conversation are not shown.)"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "Who are you?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "An agent."}]},
        {"role": "user", "content": [{"type": "text", "text": "What time is it in Paris and on Mars?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check both."},
                {"type": "tool_use", "id": "call_paris", "name": "get_time", "input": {"timezone": "Europe/Paris"}},
                {"type": "tool_use", "id": "call_mars", "name": "get_time", "input": {"timezone": "Mars/Olympus"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_paris", "content": "14:05"},
                {"type": "tool_result", "tool_use_id": "call_mars", "content": "unknown timezone", "is_error": True,
                 "cache_control": cache},
            ],
        },
    ]  # fmt: skip
    assert [tool["name"] for tool in body["tools"]] == ["get_time", "delete_file", "load_older_messages"]
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, None, cache]
    assert body["tools"][0] == {
        "name": "get_time",
        "description": "The current time in a timezone.",
        "input_schema": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
    }
    assert (body["model"], body["stream"], body["max_tokens"], body["temperature"]) == ("claude-test", True, 500, 0.3)


async def test_a_first_call_has_no_system_field_without_a_system_prompt(server: FakeProviderServer) -> None:
    server.enqueue(Reply.stream(anthropic_stream(["Noon."])))
    await complete(model(server, cache_control=None), first_question())
    body = server.requests[0].body
    assert "system" not in body
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "What time is it in Paris?"}]}]
    assert "cache_control" not in str(body)  # no breakpoint anywhere when caching is off
    assert body["max_tokens"] == 4096


async def test_text_and_tool_uses_with_split_input_are_folded(server: FakeProviderServer) -> None:
    server.enqueue(Reply.recorded(recorded("anthropic_text_and_tool_uses.sse")))
    deltas: list[str] = []
    reply = await complete(model(server), first_question(), deltas.append)
    assert deltas == ["I'll check the time", " in both cities."]
    assert reply == ModelReply(
        text="I'll check the time in both cities.",
        tool_calls=(
            ModelToolCall(
                id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="get_time", arguments='{"timezone": "Europe/Paris"}'
            ),
            ModelToolCall(id="toolu_01BjfG2wXx9nNNbtUT3fNRcH", name="get_time", arguments='{"timezone": "Asia/Tokyo"}'),
        ),
        usage=Usage(input_tokens=640, output_tokens=89, cache_read_tokens=128),  # input counts cache reads too
        finish_reason="tool_use",
    )


async def test_text_reaches_on_text_while_the_stream_is_still_open(server: FakeProviderServer) -> None:
    events = anthropic_stream(["It is ", "noon."])
    split = next(i for i, event in enumerate(events) if "text_delta" in event) + 1
    server.enqueue(Reply.stream([*events[:split], HOLD, *events[split:]]))
    first_delta = anyio.Event()
    deltas: list[str] = []
    replies: list[ModelReply] = []

    def on_text(delta: str) -> None:
        deltas.append(delta)
        first_delta.set()

    async with anyio.create_task_group() as group:

        async def call() -> None:
            replies.append(await complete(model(server), first_question(), on_text))

        group.start_soon(call)
        await first_delta.wait()
        assert (deltas, replies) == (["It is "], [])
        server.release()
    assert (replies[0].text, replies[0].finish_reason) == ("It is noon.", "end_turn")
    assert replies[0].usage == Usage(input_tokens=12, output_tokens=7)


def test_without_the_extra_construction_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # what Python does for a package that is not installed
    with pytest.raises(MissingExtra) as info:
        AnthropicModel("claude-test", api_key=KEY)
    assert str(info.value) == (
        "AnthropicModel needs the 'anthropic' extra of agent-core, which is not installed "
        "(import failed: import of anthropic halted; None in sys.modules); "
        f"install it with: {editable_install('anthropic')}"
    )


def test_without_a_key_construction_says_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no credential profile on disk either
    for name in (
        "ANTHROPIC_CONFIG_DIR",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError) as info:
        AnthropicModel("claude-test")
    assert str(info.value) == (
        "AnthropicModel needs an API key: pass api_key=... or set ANTHROPIC_API_KEY "
        "(a server that checks no key accepts any value)"
    )


def test_key_and_url_come_from_the_environment_like_the_sdk(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.enqueue(Reply.stream(anthropic_stream(["ok"])))
    reply = anyio.run(complete, AnthropicModel("claude-test"), first_question())
    assert reply.text == "ok"
    headers = server.requests[0].headers
    assert "sk-ant-from-env" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def _blocks_stream(*blocks: tuple[dict[str, object], list[dict[str, object]]], stop: str = "tool_use") -> Reply:
    """A messages-API stream of the given (start block, deltas) pairs, with cache and thinking token counts."""
    usage = {"input_tokens": 10, "cache_read_input_tokens": 500, "cache_creation_input_tokens": 90, "output_tokens": 1}
    events = [sse({"type": "message_start", "message": {"id": "m", "usage": usage}}, "message_start")]
    for index, (start, deltas) in enumerate(blocks):
        events.append(
            sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")
        )
        events += [
            sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas
        ]
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    done = {"output_tokens": 70, "output_tokens_details": {"thinking_tokens": 40}}
    events.append(sse({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": done}, "message_delta"))
    return Reply.stream(events)


THINKING_BLOCK = (
    {"type": "thinking", "thinking": "", "signature": ""},
    [
        {"type": "thinking_delta", "thinking": "Paris is UTC+1, "},
        {"type": "thinking_delta", "thinking": "so ask the tool."},
        {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxK=="},
    ],
)
REDACTED_BLOCK = ({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}, [])


async def test_thinking_and_redacted_blocks_are_kept_byte_for_byte_in_block_order(server: FakeProviderServer) -> None:
    server.enqueue(
        _blocks_stream(
            THINKING_BLOCK,
            ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Checking."}]),
            ({"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}, []),
            REDACTED_BLOCK,
            ({"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"timezone": "UTC"}}, []),
        )
    )
    deltas: list[str] = []
    reply = await complete(model(server), first_question(), deltas.append)
    assert deltas == ["Checking."]  # thinking is not the answer: it is not streamed as text
    provider = {"provider": "anthropic", "model": "claude-test"}
    thinking = '{"type":"thinking","thinking":"Paris is UTC+1, so ask the tool.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxK=="}'
    assert reply.items == (
        ac.ProviderItem(kind="thinking", data=thinking, **provider),
        ac.ProviderItem(kind="text", chars=9, **provider),
        ac.ProviderItem(kind="tool-call", ref="toolu_1", **provider),
        ac.ProviderItem(
            kind="redacted-thinking",
            data='{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}',
            **provider,
        ),
        ac.ProviderItem(kind="tool-call", ref="toolu_2", **provider),
    )
    assert [call.id for call in reply.tool_calls] == ["toolu_1", "toolu_2"]
    assert reply.usage == Usage(
        input_tokens=600, output_tokens=70, cache_read_tokens=500, cache_write_tokens=90, reasoning_tokens=40
    )


async def test_a_second_block_at_the_same_index_is_a_malformed_stream_not_a_lost_call(
    server: FakeProviderServer,
) -> None:
    first = ({"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}, [])
    second = ({"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}, [])
    reply = _blocks_stream(first, second)
    events = list(reply.events or ())
    reply = Reply.stream([e.replace('"index":1', '"index":0') for e in events])
    server.enqueue(reply)
    with pytest.raises(ModelError) as info:
        await complete(model(server), first_question())
    assert info.value.retryable
    assert str(info.value) == (
        f"Anthropic request to {server.url} sent a malformed stream: a chunk has the wrong shape (Expected a new "
        "block index, got 0, which already started a block - at `$.index`). Retryable; if it repeats, the server "
        "does not speak this provider's streaming format."
    )


async def test_thinking_goes_back_first_in_the_assistant_content_that_holds_the_tool_use(
    server: FakeProviderServer,
) -> None:
    calls = {"toolu_1": ac.ToolCallRequest(name="get_time", parameters='{"timezone":"UTC"}')}
    thinking = ac.ProviderItem(
        kind="thinking", provider="anthropic", data='{"type":"thinking","thinking":"hm","signature":"c2ln"}'
    )
    items = (
        thinking,
        ac.ProviderItem(kind="text", provider="anthropic", ref="a", chars=9),
        ac.ProviderItem(kind="tool-call", provider="anthropic", ref="toolu_1"),
    )
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", tools=(GET_TIME,)),
            ac.UserMessageReceived(timestamp=2, message_id="u", content="Time?"),
            ac.LlmMessageStarted(timestamp=3, message_id="a"),
            ac.LlmMessageCompleted(timestamp=3, message_id="a", content="Checking."),
            ac.ReActObserved(timestamp=4, called_llm_at=2, observation=ac.ContinueReAct(tool_calls=calls), items=items),
        ]
    )
    server.enqueue(Reply.stream(anthropic_stream(["Noon."])))
    await complete(model(server, thinking={"type": "enabled", "budget_tokens": 1024}), ac.llm_context(state))
    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "c2ln"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {"timezone": "UTC"}},
    ]


async def test_thinking_with_half_a_surrogate_pair_is_kept_escaped_so_every_codec_writes_it(
    server: FakeProviderServer,
) -> None:
    block = (
        {"type": "thinking", "thinking": "", "signature": ""},
        [{"type": "thinking_delta", "thinking": "half \ud800"}],
    )
    server.enqueue(_blocks_stream(block, ({"type": "text", "text": "ok"}, []), stop="end_turn"))
    reply = await complete(model(server), first_question())
    assert reply.items[0].data == '{"type":"thinking","thinking":"half \\ud800","signature":""}'
    observed = ac.ReActObserved(timestamp=1, called_llm_at=1, observation=ac.CompleteReAct(), items=reply.items)
    assert ac.decode_input(ac.encode_input(observed, format="msgpack"), format="msgpack") == observed
