"""A summarization of the context: the ``call-llm`` effect whose ``task`` is ``summarize``.

The request is ``summary_context(state)`` (the policy's prompt, the summary so
far and the range the state asked to cover); the reply's text becomes the
summary of a ``context-compacted`` input, with the call's usage and cost
(priced, and settled in the session's budget pool, like the answer's model
call: see ``call_llm``). Nothing streams to subscribers. A failure becomes ``llm-call-failed`` (the reducer
retries it like a model call); a reply that cannot stand for the context (empty,
or longer than the policy's ``summary_max_tokens``: ``summary_problem``) is a
retryable failure saying so.
"""

from __future__ import annotations

from agent_core import (
    AgentInput,
    AgentState,
    ContextCompacted,
    LlmCallFailed,
    replace_surrogates,
    summary_context,
    summary_problem,
)

from .._machine import Dispatch
from ._ask import ask_model, failed_input
from ._context import EffectContext
from ._hold import Hold


def _ignore(_: str) -> None:
    return None


async def summarize(ctx: EffectContext, state: AgentState, dispatch: Dispatch[AgentInput], hold: Hold | None) -> None:
    """Ask the model for the summary ``state`` asks for and dispatch it (or the failure); ``hold`` is the
    call's reservation in the session's budget pool, settled at the call's cost (or released if it failed)."""
    compaction, policy = state.compaction, state.config.compaction
    request = compaction.request if compaction is not None else None
    if request is None or policy is None:
        raise RuntimeError("a summarization effect was derived from a state that asks for none")
    called_at = ctx.stamp(state.timestamp)
    try:
        reply = await ask_model(ctx, summary_context(state), _ignore)
    except Exception as error:
        if hold is not None:
            await hold.release()
        dispatch(failed_input(ctx, error))
        return
    cost = ctx.price(reply.usage)
    if hold is not None:  # the call was paid for, whether its reply is a summary or not
        await hold.settle(cost)
    summary = replace_surrogates(reply.text).strip()
    problem = summary_problem(policy, summary)
    if problem is not None:  # refused here, visibly: the reducer retries it like a model call, then gives it up
        text = f"the summarization call's answer cannot stand for the context: {problem}"
        dispatch(LlmCallFailed(timestamp=ctx.stamp(), error=text, retryable=True, cost=cost))
        return
    dispatch(
        ContextCompacted(
            timestamp=ctx.stamp(),
            called_llm_at=called_at,
            summary=summary,
            messages=request.messages,
            tool_call_ids=request.tool_call_ids,
            usage=reply.usage,
            cost=cost,
        )
    )
