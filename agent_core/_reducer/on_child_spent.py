"""``child-spent``: the child session a running call runs reported what it has spent so far."""

from __future__ import annotations

from msgspec.structs import replace

from .._encodable import MAX_COUNT
from .._inputs import ChildSpent, Spend
from .._state import AgentState
from ._common import find_running_call, reject
from ._turns import NOTHING_SPENT, stop_if_spent

_FIELDS: tuple[str, ...] = tuple(name for name in Spend.__struct_fields__ if name != "unpriced")  # the counts


def on_child_spent(state: AgentState, inp: ChildSpent) -> AgentState:
    """Count what the child spent since the call's last report toward the turn's and the session's budgets,
    then stop the turn if one of them is spent (its open calls closed, so its running children are cancelled)."""
    call_id = inp.tool_call_id
    record, turn = find_running_call(state, inp, call_id)
    before = record.child_spent or NOTHING_SPENT
    spent = inp.spent
    for name in _FIELDS:
        now, then = getattr(spent, name), getattr(before, name)
        if now < then:
            reject(
                state,
                inp,
                "spend-went-down",
                "spend-cumulative",
                f"child-spent for tool call {call_id!r}: {name}={now} is less than the {then} reported before; "
                "expected what the child session has spent in all so far",
            )
        if now > MAX_COUNT:
            reject(
                state,
                inp,
                "spend-overflow",
                "spend-in-range",
                f"child-spent for tool call {call_id!r}: {name}={now} is past {MAX_COUNT}; "
                "expected what one child session spent",
            )
    if spent == before:
        return replace(state, timestamp=inp.timestamp, step=state.step + 1)
    turn = replace(turn, children_spent=_added(turn.children_spent, before, spent))
    state = replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(call_id, replace(record, child_spent=spent)),
        turn=turn,
        children_spent=_added(state.children_spent, before, spent),
    )
    return stop_if_spent(state, turn, tool_calls=True)


def _added(total: Spend | None, before: Spend, now: Spend) -> Spend:
    """``total`` with what ``now`` adds to ``before``."""
    base = total or NOTHING_SPENT
    return Spend(
        model_calls=base.model_calls + now.model_calls - before.model_calls,
        tool_calls=base.tool_calls + now.tool_calls - before.tool_calls,
        tokens=base.tokens + now.tokens - before.tokens,
        cost=base.cost + now.cost - before.cost,
        unpriced=base.unpriced or now.unpriced,  # a cost once unknown stays unknown
    )
