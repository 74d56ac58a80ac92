"""AnthropicModel against a scripted messages-API server: the request it sends and the events it folds."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from install_hint import editable_install

from agent_core import Usage
from effects import ModelReply, ModelToolCall
from effects.providers import AnthropicModel, MissingExtra
from effects.testing import HOLD, FakeProviderServer, Reply, anthropic_stream

from ._conversation import SYSTEM, context, first_question
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
