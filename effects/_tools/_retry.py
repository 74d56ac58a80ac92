"""Retry policies for tools: exception classes become the names a :class:`~agent_core.ToolRetry` carries.

The log holds data, never code: a policy names the failures it retries, and a
failed call carries the ``code`` it failed with. This module makes both from
Python: :func:`retry` turns exception classes into names, :func:`failure_code`
names the exception a tool raised, as the policy's matching name when the
exception is an instance of one of its classes.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_core import DEFAULT_RETRY_ON, ToolRetry


def error_code(cls: type[BaseException]) -> str:
    """The name of an exception class in a retry policy and a failure's ``code``: ``ConnectionError`` for a
    builtin, ``module.QualifiedName`` for any other."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def failure_code(error: BaseException, on: Iterable[str] = ()) -> str:
    """The ``code`` of a call that raised ``error``: the first class of its type's hierarchy that ``on`` names
    (so a subclass of a retried exception is retried), else its own type's name."""
    names = set(on)
    if names:
        for cls in type(error).__mro__:
            name = error_code(cls)
            if name in names:
                return name
    return error_code(type(error))


def retry(
    attempts: int = 3,
    *,
    on: Iterable[type[BaseException] | str] = DEFAULT_RETRY_ON,
    base_ms: int = 1000,
    max_ms: int = 30000,
    force: bool = False,
) -> ToolRetry:
    """A :class:`~agent_core.ToolRetry` for ``@tool(retry=...)``: up to ``attempts`` attempts in all, on the
    failures ``on`` names: exception classes (their subclasses too) or codes (``"timeout"``).

    ``force=True`` allows the policy on a tool that is not ``idempotent``, which is otherwise refused.
    """
    names = tuple(item if isinstance(item, str) else error_code(item) for item in on)
    return ToolRetry(max_attempts=attempts, base_ms=base_ms, max_ms=max_ms, on=names, force=force)
