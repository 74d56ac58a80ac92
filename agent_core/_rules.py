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
verdict other than ``allow`` decides. Each call is judged once, when the
model proposes it.

Both kinds must be pure and deterministic (they run in the reducer, so they
replay); a guard or rule changed after a log was written is what
``replay --verify`` catches. One that raises (or a rule that returns
something other than a :class:`Verdict`) never escapes the reducer: a rule
fails the turn with reason ``rule:<name>-raised``, a guard of a transition
triggered by a tool call fails the turn with reason ``guard:<name>-raised``,
and a guard of a ``workflow-action-taken`` refuses the action
(``InvalidInput``, code ``guard-raised``). The outcome's detail names the
guard or rule and the error as ``Type: message``, so the message must be
deterministic too (no addresses, times or ids drawn at random): replaying the
log raises again and must record the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

import msgspec

from ._codec import UNREADABLE
from ._encodable import replace_surrogates
from ._registry import register

if TYPE_CHECKING:
    from ._inputs import AgentInput
    from ._state import AgentState

VerdictKind = Literal["allow", "retry", "ask", "stop"]
_KINDS: tuple[str, ...] = get_args(VerdictKind)


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
    return lambda fn: register(_GUARDS, "guard", name, fn)


def register_rule(name: str) -> Callable[[Rule], Rule]:
    """Decorator: register a pure rule under ``name`` for ``session-started`` to list.

    Raises ``ValueError`` when another function already holds the name.
    """
    return lambda fn: register(_RULES, "rule", name, fn)


def known_guards() -> tuple[str, ...]:
    """The registered guard names, sorted."""
    return tuple(sorted(_GUARDS))


def known_rules() -> tuple[str, ...]:
    """The registered rule names, sorted."""
    return tuple(sorted(_RULES))


RESUMING = "import the module that registers them (register_{kind}()) before resuming or replaying the session"
"""What to do about names missing when a session resumes (its ``session-started`` passed in another process)."""


def unregistered(kind: Literal["guard", "rule"], names: Iterable[str], user: str, fix: str = RESUMING) -> str:
    """A message for the ``names`` (of guards or rules) not registered in this process, else ``""``.

    ``user`` says who names them (``the session's workflow``), ``fix`` what to
    do (``{kind}`` is filled in). A session's ``session-started`` is checked when
    it is applied; a state loaded from a snapshot, in a process that registered
    fewer, is checked again when the names are used.
    """
    table = _GUARDS if kind == "guard" else _RULES
    missing = sorted({name for name in names if name and name not in table})
    if not missing:
        return ""
    return (
        f"{kind}(s) {', '.join(map(repr, missing))} named by {user} are not registered in this process; "
        f"registered {kind}s: {', '.join(sorted(table)) or 'none'}; {fix.format(kind=kind)}"
    )


class Raised(NamedTuple):
    """A guard, rule or compaction strategy that raised: ``kind`` (``guard``, ``rule``, ``compaction``), its
    ``name``, the ``error`` as ``Type: message``."""

    kind: str
    name: str
    error: str

    @property
    def reason(self) -> str:
        """The turn's outcome reason: ``<kind>:<name>-raised``."""
        return f"{self.kind}:{self.name}-raised"

    def detail(self, about: str) -> str:
        """What happened, ``about`` naming what was being decided (``tool call 't1' (search)``)."""
        return (
            f"{self.kind} {self.name!r} raised {self.error} on {about}; "
            f"expected a pure {self.kind} that returns; fix it (it is called again on replay)"
        )


ERROR_CHARS = 300
"""Characters of a raising guard's or rule's error message kept in the outcome."""


def raised_by(kind: str, name: str, error: Exception) -> Raised:
    """How the user's function ``name`` (a ``kind``: guard, rule, compaction strategy) raised: bounded, writable."""
    try:
        text = str(error)
    except Exception as unprintable:  # an error whose __str__ raises: say so instead of escaping the reducer
        text = f"(its message could not be shown: str() raised {type(unprintable).__name__})"
    if len(text) > ERROR_CHARS:
        text = text[:ERROR_CHARS] + "..."
    shown = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return Raised(kind, name, replace_surrogates(shown))  # it enters the state: every codec must write it


def guard_passes(name: str, state: AgentState, trigger: AgentInput) -> bool | Raised:
    """Whether the registered guard ``name`` passes (the empty name always does), or how it raised."""
    if not name:
        return True
    try:
        return bool(_GUARDS[name](state, trigger))
    except Exception as error:  # a user's guard: any error becomes the session's visible outcome
        return raised_by("guard", name, error)


_args = msgspec.json.Decoder()


class Judgement(NamedTuple):
    """The verdict on one proposed call: the deciding ``rule`` ("" when all allow) and its ``verdict``."""

    rule: str
    verdict: Verdict


def judge(rules: tuple[str, ...], call_id: str, name: str, parameters: str, state: AgentState) -> Judgement | Raised:
    """The first verdict other than ``allow`` among the registered ``rules`` and the rule's name, else
    ``("", ALLOW)``; or how a rule raised (or returned something other than a known verdict)."""
    try:
        arguments = _args.decode(parameters)
    except UNREADABLE:  # not JSON, or nested deeper than Python recurses: the rule sees no arguments
        arguments = None
    call = ProposedCall(id=call_id, name=name, parameters=parameters, arguments=arguments)
    for rule in rules:
        try:
            verdict = _RULES[rule](call, state)
            # A reason that is not a str could show a memory address (not replayable) or raise when shown.
            if not isinstance(verdict, Verdict) or verdict.kind not in _KINDS or not isinstance(verdict.reason, str):
                raise TypeError(
                    f"returned {_returned(verdict)}; expected a Verdict of kind {', '.join(_KINDS)} with a str reason"
                )
        except Exception as error:  # a user's rule: any error becomes the session's visible outcome
            return raised_by("rule", rule, error)
        if verdict.kind != "allow":
            # The reason enters the state (the model reads it): every codec must be able to write it.
            reason = replace_surrogates(verdict.reason)
            return Judgement(rule, verdict if reason is verdict.reason else Verdict(kind=verdict.kind, reason=reason))
    return _ALLOWED


_ALLOWED = Judgement("", ALLOW)


def _returned(value: object) -> str:
    """What a rule returned, without its ``repr`` (which may hold an address that differs on replay)."""
    if not isinstance(value, Verdict):
        return f"a {type(value).__name__}"
    kind = value.kind
    shown = repr(kind) if isinstance(kind, str) else f"of type {type(kind).__name__}"
    reason = "" if isinstance(value.reason, str) else f" and a reason of type {type(value.reason).__name__}"
    return f"a Verdict of kind {shown}{reason}"
