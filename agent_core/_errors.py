"""Errors of the pure core.

Who must act decides the class::

    AgentCoreError
    ├── InvalidInput   the producer of an input sent something the state cannot accept now
    │                  (carries a Rejection: code, guard, message, input types valid now)
    ├── DecodeError    bytes that are not a valid input, state or log (names record and field path)
    └── InvariantViolation (also an AssertionError)
                       a state breaks an invariant: a bug in a reducer, never in user input

Failures the *model* must see (bad tool arguments, tool exceptions, timeouts)
are not exceptions: they are failure results inside inputs.
"""

from __future__ import annotations

import msgspec


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """Why an input was refused.

    ``code`` is a short stable name of the problem (``unknown-tool-call``),
    ``guard`` names the rule that refused (``tool-call-exists``), ``message``
    says what was expected and what came, and ``valid_now`` lists the input
    types the state accepts in its current phase.
    """

    code: str
    guard: str
    message: str
    input_type: str = ""
    valid_now: tuple[str, ...] = ()

    def __str__(self) -> str:
        valid = ", ".join(self.valid_now) or "none"
        return f"{self.message} [{self.code}; valid now: {valid}]"


class AgentCoreError(Exception):
    """Base of every error raised by agent_core."""


class InvalidInput(AgentCoreError):
    """``transition`` refused an input; ``rejection`` says why and what is valid now.

    When raised by :func:`agent_core.replay`, ``index`` is the position of the
    refused input in the sequence (0-based); otherwise it is ``None``.
    """

    def __init__(self, rejection: Rejection, index: int | None = None) -> None:
        self.rejection = rejection
        self.index = index
        where = f"input {index}: " if index is not None else ""
        super().__init__(f"{where}{rejection}")


class DecodeError(AgentCoreError, ValueError):
    """Bytes could not be decoded. ``record`` is the 1-based record (line) number when known, ``path`` the field path."""

    def __init__(self, message: str, *, record: int | None = None, path: str = "", source: str = "") -> None:
        self.record = record
        self.path = path
        self.source = source
        self.detail = message
        where = ""
        if source:
            where += f"{source}: "
        if record is not None:
            where += f"record {record}: "
        super().__init__(f"{where}{message}")


class InvariantViolation(AgentCoreError, AssertionError):
    """A state breaks an invariant of the agent. ``problems`` lists each broken rule."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("state breaks its invariants:\n- " + "\n- ".join(problems))
