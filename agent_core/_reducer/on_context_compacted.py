"""``context-compacted``: a summarization finished; its summary stands for the range it covers."""

from __future__ import annotations

from msgspec.structs import replace

from .._compaction._summary import summary_problem
from .._encodable import MAX_COUNT
from .._inputs import ContextCompacted
from .._state import AgentState
from ._common import reject, require_thinking
from ._spend import check_cost, session_spend, turn_spend
from ._turns import settle


def on_context_compacted(state: AgentState, inp: ContextCompacted) -> AgentState:
    """Keep the summary and what it covers (the range the state asked for), take the covered tool calls out
    of the turn's context (they stay in the state, loadable by id), count the call's tokens and cost, and ask the
    model again (or compact further, or fail ``context-too-long``, as the policy says)."""
    turn = require_thinking(state, inp)
    compaction = state.compaction
    request = compaction.request if compaction is not None else None
    if compaction is None or request is None:
        reject(
            state,
            inp,
            "no-summary-asked",
            "summary-asked",
            "no summarization of the context is under way; expected context-compacted only as the result of one",
        )
    if inp.messages != request.messages or inp.tool_call_ids != request.tool_call_ids:
        reject(
            state,
            inp,
            "summary-range",
            "summary-covers-request",
            f"the summary covers messages[:{inp.messages}] and tool calls {list(inp.tool_call_ids)}; expected "
            f"the range asked for: messages[:{request.messages}] and tool calls {list(request.tool_call_ids)}",
        )
    policy = state.config.compaction
    assert policy is not None  # a summarization is asked for only under a policy
    problem = summary_problem(policy, inp.summary)
    if problem is not None:
        code, rule = (
            ("empty-summary", "summary-present") if not inp.summary.strip() else ("summary-too-long", "summary-fits")
        )
        reject(state, inp, code, rule, f"{problem}; a summarization that gives none is an llm-call-failed")
    usage = inp.usage
    if inp.called_llm_at > inp.timestamp or min(usage.input_tokens, usage.output_tokens) < 0:
        reject(
            state,
            inp,
            "summary-call",
            "call-precedes-result",
            f"expected called_llm_at at or before the timestamp ({inp.timestamp}) and token counts of 0 or more, "
            f"got called_llm_at={inp.called_llm_at}, usage={usage}",
        )
    if state.input_tokens + usage.input_tokens > MAX_COUNT or state.output_tokens + usage.output_tokens > MAX_COUNT:
        reject(state, inp, "usage-overflow", "token-counts-in-range", f"usage {usage} would overflow the counters")
    check_cost(state, inp)
    covered = frozenset(inp.tool_call_ids)
    compaction = replace(
        compaction,
        summary=inp.summary,
        summarized_messages=inp.messages,
        summarized_calls=compaction.summarized_calls + len(covered),
        summaries=compaction.summaries + 1,
        request=None,
        last_input_tokens=0,
        cleared=tuple(call_id for call_id in compaction.cleared if call_id not in covered),
        summary_input_tokens=compaction.summary_input_tokens + usage.input_tokens,
        summary_output_tokens=compaction.summary_output_tokens + usage.output_tokens,
    )
    cost, unpriced = turn_spend(state, turn, inp.cost)
    turn = replace(
        turn,
        cost=cost,
        unpriced=unpriced,
        tool_call_ids=tuple(call_id for call_id in turn.tool_call_ids if call_id not in covered),
        context_rev=turn.context_rev + 1,
        tokens=turn.tokens + usage.input_tokens + usage.output_tokens,
        attempt=0,
    )
    return settle(
        replace(
            state,
            timestamp=inp.timestamp,
            step=state.step + 1,
            turn=turn,
            compaction=compaction,
            input_tokens=state.input_tokens + usage.input_tokens,
            output_tokens=state.output_tokens + usage.output_tokens,
            cost=session_spend(state, inp.cost),
        )
    )
