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
    due retry ends its backoff and the model call is derived again. A timer is due at exactly
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
    due = [f"{name} at {at}" for name, at in (("retry", turn.retry_at), ("deadline", deadline)) if at is not None]
    reject(
        state,
        inp,
        "timer-not-due",
        "timer-due",
        f"no timer is due at {now}; expected a time at or after "
        + (" or ".join(due) if due else "a pending timer (none)"),
    )
