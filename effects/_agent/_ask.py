"""Asking the model, shared by the answer's and the summarization's model calls: the timeout, and the input a
failure becomes."""

from __future__ import annotations

from agent_core import LlmCallFailed, LlmContext, replace_surrogates

from .._clock import TIMED_OUT, run_until
from .._model import Model, ModelError, ModelReply, TextSink
from ._context import EffectContext


async def ask_model(
    ctx: EffectContext, context: LlmContext, on_text: TextSink, model: Model | None = None
) -> ModelReply:
    """The reply of ``model`` (else the session's) to ``context``, or :class:`ModelError` (retryable) when it
    takes longer than the context allows."""
    timeout = ctx.model_timeout_ms
    answering = model if model is not None else ctx.model
    if timeout is None:
        return await answering.complete(context, on_text)
    reply = await run_until(  # final: nothing after it waits (under trio the timeout may cancel the effect's scope)
        ctx.clock, ctx.clock.now_ms() + timeout, answering.complete, context, on_text, final=True
    )
    if reply is TIMED_OUT:
        raise ModelError(f"the model did not answer within {timeout} ms", retryable=True)
    return reply


def failed_input(ctx: EffectContext, error: Exception) -> LlmCallFailed:
    """The ``llm-call-failed`` for what a model call raised (see ``call_llm``'s docstring)."""
    if isinstance(error, ModelError):
        text = str(error) or type(error).__name__
        text = f"HTTP {error.status}: {text}" if error.status is not None else text
        return LlmCallFailed(
            timestamp=ctx.stamp(),
            error=replace_surrogates(text),
            retryable=error.retryable,
            retry_after_ms=error.retry_after_ms,
            context_too_long=error.context_too_long,
        )
    text = replace_surrogates(f"{type(error).__name__}: {error}")
    return LlmCallFailed(timestamp=ctx.stamp(), error=text, retryable=False)
