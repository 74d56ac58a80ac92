"""An interrupt gate: a rule that makes every n-th model call's proposals wait for a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._rules import ALLOW, ProposedCall, Rule, Verdict

if TYPE_CHECKING:
    from ._state import AgentState


def interrupt_every(model_calls: int) -> Rule:
    """A rule for an interrupt gate: the calls proposed by every ``model_calls``-th model call of a
    turn wait for a person (``ask``), who resumes (approves), refuses (denies), aborts the turn
    (``re-act-cancelled``) or rolls back (forks the log before it).

    Register it under a name of your choice: ``register_rule("gate")(interrupt_every(5))``.
    """
    if model_calls < 1:
        raise ValueError(f"expected model_calls of 1 or more, got {model_calls}")

    def gate(call: ProposedCall, state: AgentState) -> Verdict:
        turn = state.turn
        # The proposing model call is counted once its observation is applied, so it is the next one.
        number = 1 + (turn.model_calls if turn is not None else 0)
        if number % model_calls == 0:
            return Verdict(kind="ask", reason=f"interrupt gate: model call {number} of the turn")
        return ALLOW

    return gate
