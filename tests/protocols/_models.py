"""Models and tools the protocol tests share: a model whose streaming a test holds mid-answer, a refund tool."""

from __future__ import annotations

import anyio

from agent_core import TEXT_MARKER, LlmContext, ProviderItem
from effects import ModelReply, ModelToolCall, TextSink, tool


@tool(requires_approval=True)
def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded order {order}"


class HeldModel:
    """Streams its first answer's first words, waits for ``release``, then asks to refund order 42; then answers,
    with its thinking as a provider item."""

    def __init__(self) -> None:
        self.streaming = anyio.Event()
        self.release = anyio.Event()
        self.calls = 0

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        self.calls += 1
        if self.calls == 1:
            on_text("Let me ")
            self.streaming.set()
            await self.release.wait()
            on_text("check that order.")
            call = ModelToolCall(id="call-1", name="refund", arguments='{"order":42}')
            return ModelReply(text="Let me check that order.", tool_calls=(call,), finish_reason="tool_calls")
        on_text("Order 42 is refunded.")
        thinking = '{"type":"thinking","thinking":"The refund went through.","signature":"c2ln"}'
        items = (
            ProviderItem(kind="thinking", provider="anthropic", data=thinking),
            ProviderItem(kind=TEXT_MARKER, provider="anthropic", chars=len("Order 42 is refunded.")),
        )
        return ModelReply(text="Order 42 is refunded.", finish_reason="stop", items=items)
