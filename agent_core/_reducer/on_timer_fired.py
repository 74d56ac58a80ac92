"""``timer-fired``: a ``wait-until`` came due (the turn's deadline, or the end of a retry backoff)."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import TimerFired
from .._state import AgentState, running_deadline
from ._common import reject, require_turn
from ._turns import exhaust


def on_timer_fired(state: AgentState, inp: TimerFired) -> AgentState:
    """A due deadline wins: the turn fails with ``timeout`` (or asks for a final answer); a deadline
    paused while the turn waits for an approval is never due. Else a
    due retry ends its backoff and the model call is derived again, or every tool call whose
    backoff is over runs again. A timer is due at exactly
    its time. A timer that is not due is refused."""
    turn = require_turn(state, inp)
    now = inp.timestamp
    state = replace(state, timestamp=now, step=state.step + 1)
    deadline = running_deadline(turn)
    if deadline is not None and now >= deadline:
        limit = state.config.max_turn_ms
        return exhaust(state, "timeout", f"the turn ran past its deadline of {limit} ms")
    if turn.retry_at is not None and now >= turn.retry_at:
        return replace(state, turn=replace(turn, retry_at=None))
    calls = state.tool_calls
    backing_off = [calls[i] for i in turn.open_call_ids if calls[i].retry_at is not None]
    if backing_off:
        over = [record for record in backing_off if now >= (record.retry_at or 0)]
        if over:  # their backoff is over: each runs again, from tool-call-started
            for record in over:
                calls = calls.set(record.id, replace(record, retry_at=None))
            return replace(state, tool_calls=calls)
    due_times = (("retry", turn.retry_at), ("deadline", deadline))
    due = [f"{name} at {at}" for name, at in due_times if at is not None]
    due += [f"the retry of tool call {record.id!r} at {record.retry_at}" for record in backing_off]
    reject(
        state,
        inp,
        "timer-not-due",
        "timer-due",
        f"no timer is due at {now}; expected a time at or after "
        + (" or ".join(due) if due else "a pending timer (none)"),
    )
