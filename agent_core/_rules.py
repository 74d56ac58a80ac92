"""Guards and rules: pure checks registered by name in code, named by a session's data.

A **guard** decides whether a workflow transition is taken:
``guard(state, trigger) -> bool``, where ``trigger`` is the input that
triggered it (the ``tool-call-completed`` of the call).

A **rule** judges each proposed tool call before it runs:
``rule(call, state) -> Verdict``. The verdicts and their outcomes:

* ``allow``: the call goes on (to approval if the tool needs it, else to run);
* ``retry``: the call is refused; it completes with a failure carrying the
  rule's reason, and the model tries again;
* ``ask``: the call waits for a person's decision, as approval does;
* ``stop``: the batch is not run and the turn ends ``failed`` with reason
  ``rule:<name>``.

Rules listed in ``session-started`` are tried in that order; the first
verdict other than ``allow`` decides. Both kinds must be pure and
deterministic (they run in the reducer, so they replay); a guard or rule
changed after a log was written is what ``replay --verify`` catches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ._codec import UNREADABLE

if TYPE_CHECKING:
    from ._inputs import AgentInput
    from ._state import AgentState

VerdictKind = Literal["allow", "retry", "ask", "stop"]


class Verdict(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A rule's answer about one proposed call: ``kind`` and, unless allowed, the ``reason``."""

    kind: VerdictKind
    reason: str = ""


ALLOW = Verdict(kind="allow")
"""The verdict of a rule that lets the call go on."""


class ProposedCall(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A tool call the model proposed: its id, tool name, JSON ``parameters`` and their parsed ``arguments``
    (``None`` when the parameters are not valid JSON)."""

    id: str
    name: str
    parameters: str
    arguments: Any


Guard = Callable[["AgentState", "AgentInput"], bool]
Rule = Callable[[ProposedCall, "AgentState"], Verdict]

_GUARDS: dict[str, Guard] = {}
_RULES: dict[str, Rule] = {}


def register_guard(name: str) -> Callable[[Guard], Guard]:
    """Decorator: register a pure guard under ``name`` for workflows to name.

    Raises ``ValueError`` when another function already holds the name.
    """
    return lambda fn: _register(_GUARDS, "guard", name, fn)


def register_rule(name: str) -> Callable[[Rule], Rule]:
    """Decorator: register a pure rule under ``name`` for ``session-started`` to list.

    Raises ``ValueError`` when another function already holds the name.
    """
    return lambda fn: _register(_RULES, "rule", name, fn)


def _register(table: dict[str, Any], kind: str, name: str, fn: Any) -> Any:
    held = table.get(name)
    if not name:
        raise ValueError(f"expected a non-empty {kind} name, got an empty string")
    if held is not None and held is not fn:
        raise ValueError(
            f"{kind} {name!r} is already registered to {held.__qualname__}; "
            f"expected a new name for {fn.__qualname__}, or register it once"
        )
    table[name] = fn
    return fn


def known_guards() -> tuple[str, ...]:
    """The registered guard names, sorted."""
    return tuple(sorted(_GUARDS))


def known_rules() -> tuple[str, ...]:
    """The registered rule names, sorted."""
    return tuple(sorted(_RULES))


def guard_passes(name: str, state: AgentState, trigger: AgentInput) -> bool:
    """Whether the guard ``name`` passes (the empty name always does)."""
    return not name or bool(_GUARDS[name](state, trigger))


_args = msgspec.json.Decoder()


def judge(rules: tuple[str, ...], call_id: str, name: str, parameters: str, state: AgentState) -> tuple[str, Verdict]:
    """The first verdict other than ``allow`` among ``rules`` and the rule's name, else ``("", ALLOW)``."""
    try:
        arguments = _args.decode(parameters)
    except UNREADABLE:  # not JSON, or nested deeper than Python recurses: the rule sees no arguments
        arguments = None
    call = ProposedCall(id=call_id, name=name, parameters=parameters, arguments=arguments)
    for rule in rules:
        verdict = _RULES[rule](call, state)
        if verdict.kind != "allow":
            return rule, verdict
    return "", ALLOW


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
