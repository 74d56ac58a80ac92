"""Streams in the providers' wire formats, for :class:`~effects.providers.FakeProviderServer` replies.

The chunk shapes follow what the real APIs send: OpenAI's role chunk, content
deltas, tool calls whose first chunk carries id and name and whose arguments
follow in pieces, a finish chunk, a usage chunk with no choices and
``[DONE]``; Anthropic's ``message_start`` ... ``message_stop`` events with
``ping``, ``text_delta`` and ``input_json_delta``; the Responses API's
``response.created``, output items added and done, their text and argument
deltas, and ``response.completed`` (or ``response.incomplete``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ._fake_server import Reply, sse


class FakeToolCall(NamedTuple):
    """A tool call to stream: its id, the tool's name and its JSON arguments in the pieces to send."""

    id: str
    name: str
    argument_pieces: Sequence[str] = ("{}",)


def openai_stream(
    text: Sequence[str] = (),
    tool_calls: Sequence[FakeToolCall] = (),
    *,
    usage: tuple[object, object] = (12, 7),
    model: str = "fake-model",
    finish_reason: str | None = None,
    reasoning: Sequence[str] = (),
) -> list[str]:
    """A chat-completion chunk stream: ``reasoning`` pieces (as ``reasoning_content``, the way DeepSeek and vLLM
    stream them), ``text`` pieces, then the tool calls (each split as given), usage, ``[DONE]``.

    ``usage`` is (prompt, completion) tokens; any JSON value goes, to play a server that sends ``null`` or ``-1``.
    """

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse({**head, "choices": [choice], "usage": None})

    head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model}
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"reasoning_content": piece}) for piece in reasoning]
    events += [chunk({"content": piece}) for piece in text]
    for index, call in enumerate(tool_calls):
        start = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        events.append(chunk({"tool_calls": [start]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in call.argument_pieces
        ]
    events.append(chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    total = usage[0] + usage[1] if isinstance(usage[0], int) and isinstance(usage[1], int) else None
    counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": total}
    events.append(sse({**head, "choices": [], "usage": counts}))
    events.append(sse("[DONE]"))
    return events


def anthropic_stream(
    text: Sequence[str] = (),
    tool_calls: Sequence[FakeToolCall] = (),
    *,
    usage: tuple[object, object] = (12, 7),
    model: str = "fake-model",
    stop_reason: str | None = None,
    thinking: Sequence[str] = (),
) -> list[str]:
    """A messages-API event stream: a ``thinking`` block with ``thinking`` pieces and a signature (if any), a text
    block with ``text`` pieces (if any), one ``tool_use`` block per call.

    ``usage`` is (input, output) tokens; any JSON value goes, to play a server that sends ``null`` or ``-1``.
    """
    message: dict[str, Any] = {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": 1},
    }  # fmt: skip
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if thinking:
        pieces = [{"type": "thinking_delta", "thinking": piece} for piece in thinking]
        signed = {"type": "signature_delta", "signature": "c2lnbmF0dXJlLWZha2U="}
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, [*pieces, signed]))
    if text:
        blocks.append(({"type": "text", "text": ""}, [{"type": "text_delta", "text": piece} for piece in text]))
    for call in tool_calls:
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        blocks.append((start, [{"type": "input_json_delta", "partial_json": p} for p in call.argument_pieces]))
    for index, (start, deltas) in enumerate(blocks):
        events.append(
            sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")
        )
        if index == 0:
            events.append(sse({"type": "ping"}, "ping"))
        for delta in deltas:
            events.append(sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = stop_reason or ("tool_use" if tool_calls else "end_turn")
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": usage[1]},
    }
    events.append(sse(delta, "message_delta"))
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


def responses_stream(
    text: Sequence[str] = (),
    tool_calls: Sequence[FakeToolCall] = (),
    *,
    usage: tuple[object, object] = (12, 7),
    model: str = "fake-model",
    status: str | None = None,
    reasoning: Sequence[str] = (),
) -> list[str]:
    """A Responses-API event stream: a ``reasoning`` item whose summary is the ``reasoning`` pieces (if any, with
    an opaque ``encrypted_content``), a message with ``text`` pieces (if any), one ``function_call`` item per call
    (arguments split as given), then ``response.completed``.

    ``status``: ``None`` completes; ``"incomplete/<reason>"`` ends with ``response.incomplete`` for that reason
    (``max_output_tokens``, ``content_filter``); ``"refusal"`` streams ``text`` as a refusal. ``usage`` is (input,
    output) tokens; any JSON value goes.
    """
    refused = status == "refusal"
    head = {"id": "resp_fake", "object": "response", "created_at": 1700000000, "model": model, "output": []}
    events = [sse({"type": "response.created", "sequence_number": 0, "response": {**head, "status": "in_progress"}})]
    output: list[dict[str, Any]] = []
    if reasoning:
        thought = {"id": "rs_fake", "type": "reasoning", "summary": []}
        events.append(sse({"type": "response.output_item.added", "output_index": 0, "item": thought}))
        for piece in reasoning:
            delta = {"item_id": "rs_fake", "output_index": 0, "summary_index": 0, "delta": piece}
            events.append(sse({"type": "response.reasoning_summary_text.delta", **delta}))
        summary = [{"type": "summary_text", "text": "".join(reasoning)}]
        done = {**thought, "summary": summary, "encrypted_content": "gAAAA-fake-encrypted"}
        events.append(sse({"type": "response.output_item.done", "output_index": 0, "item": done}))
        output.append(done)
    if text:
        index = len(output)
        item = {"id": "msg_fake", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        events.append(sse({"type": "response.output_item.added", "output_index": index, "item": item}))
        kind = "response.refusal.delta" if refused else "response.output_text.delta"
        for piece in text:
            delta = {"item_id": "msg_fake", "output_index": index, "content_index": 0, "delta": piece}
            events.append(sse({"type": kind, **delta, **({} if refused else {"logprobs": []})}))
        part = (
            {"type": "refusal", "refusal": "".join(text)}
            if refused
            else {"type": "output_text", "text": "".join(text), "annotations": []}
        )
        done = {**item, "status": "completed", "content": [part]}
        events.append(sse({"type": "response.output_item.done", "output_index": index, "item": done}))
        output.append(done)
    for call in tool_calls:
        index = len(output)
        item = {
            "id": f"fc_{call.id}", "type": "function_call", "status": "in_progress",
            "call_id": call.id, "name": call.name, "arguments": "",
        }  # fmt: skip
        events.append(sse({"type": "response.output_item.added", "output_index": index, "item": item}))
        for piece in call.argument_pieces:
            delta = {"item_id": item["id"], "output_index": index, "delta": piece}
            events.append(sse({"type": "response.function_call_arguments.delta", **delta}))
        done = {**item, "status": "completed", "arguments": "".join(call.argument_pieces)}
        events.append(sse({"type": "response.output_item.done", "output_index": index, "item": done}))
        output.append(done)
    total = usage[0] + usage[1] if isinstance(usage[0], int) and isinstance(usage[1], int) else None
    counts = {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": total}
    final = {**head, "status": "completed", "output": output, "usage": counts}
    if status is not None and status.startswith("incomplete/"):
        final = {**final, "status": "incomplete", "incomplete_details": {"reason": status.partition("/")[2]}}
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    events.append(sse({"type": kind, "sequence_number": len(events), "response": final}))
    return events


def openai_reply(text: Sequence[str] = (), tool_calls: Sequence[FakeToolCall] = (), **options: Any) -> Reply:
    """A streamed OpenAI reply (see :func:`openai_stream`)."""
    return Reply.stream(openai_stream(text, tool_calls, **options))


def anthropic_reply(text: Sequence[str] = (), tool_calls: Sequence[FakeToolCall] = (), **options: Any) -> Reply:
    """A streamed Anthropic reply (see :func:`anthropic_stream`)."""
    return Reply.stream(anthropic_stream(text, tool_calls, **options))


def responses_reply(text: Sequence[str] = (), tool_calls: Sequence[FakeToolCall] = (), **options: Any) -> Reply:
    """A streamed Responses-API reply (see :func:`responses_stream`)."""
    return Reply.stream(responses_stream(text, tool_calls, **options))


def error_reply(status: int, message: str, *, kind: str = "", headers: dict[str, str] | None = None) -> Reply:
    """An error answer in the common ``{"error": {"message", "type"}}`` shape (both APIs use it)."""
    body: dict[str, Any] = {"error": {"message": message, "type": kind or "error"}}
    if status >= 400 and kind.endswith("_error"):  # Anthropic wraps the error with a type
        body = {"type": "error", **body}
    return Reply(status=status, headers=headers or {}, body=body)
