"""``@tool``: a plain Python function, sync or async, becomes a tool the model can call.

::

    @tool
    def add(a: int, b: int) -> int:
        '''Add two integers.

        Args:
            a: the first addend
            b: the second addend
        '''
        return a + b

    @tool(requires_approval=True, idempotent=True, timeout_ms=5000, name="send_mail")
    async def send(to: str, body: str, tool_call_id: str) -> str: ...

    @tool(inline=True)  # pure and quick: called on the event loop's thread, no worker thread
    def word_count(text: str) -> int: ...

The decorated object is still callable like the function. The model's JSON
arguments are validated by pydantic before the function runs; a sync function
runs in a worker thread so it never blocks the event loop. A parameter named
``tool_call_id`` receives the call's id, stable across a crash and resume: use
it as an idempotency key. A ``str`` result reaches the model as is, anything
else JSON-encoded.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar, overload

import anyio.to_thread
import pydantic
import pydantic_core
from pydantic import ValidationError

from agent_core import ToolDefinition, ToolFailure, ToolResult, ToolRetry, ToolSuccess

from . import _messages
from ._cancel import cancelled_by_caller
from ._docstring import parse_docstring
from ._outcomes import Resumption, ToolOutcome
from ._retry import failure_code
from ._schema import Signature, describe_parameters

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Tool(Generic[P, R_co]):
    """A function registered as a tool: its :class:`~agent_core.ToolDefinition` and how to run one call.

    Build it with :func:`tool`. ``definition`` is what ``session-started``
    records and the model is offered; :meth:`invoke` runs one call from the
    model's JSON arguments and never raises for the model's mistakes or the
    tool's exceptions: they become a ``ToolFailure`` the model reads.

    Covariant in its result: a ``Tool[..., int]`` is a ``Tool[..., object]``,
    so tools of different results share a ``list[Tool[..., object]]``.
    """

    def __init__(
        self,
        fn: Callable[P, R_co],
        *,
        name: str | None = None,
        description: str | None = None,
        requires_approval: bool = False,
        idempotent: bool = False,
        timeout_ms: int | None = None,
        inline: bool = False,
        retry: ToolRetry | None = None,
    ) -> None:
        if retry is not None and not idempotent and not retry.force:
            raise ValueError(
                f"tool {name or fn.__name__!r} has a retry policy but is not idempotent; expected "
                "idempotent=True (running it twice is safe), or force=True in its retry policy to retry it anyway"
            )
        if timeout_ms is not None and timeout_ms <= 0:
            raise ValueError(f"tool {name or fn.__name__!r}: expected a positive timeout_ms or None, got {timeout_ms}")
        if inline and inspect.iscoroutinefunction(fn):
            raise ValueError(
                f"tool {name or fn.__name__!r}: inline=True is for plain (def) functions; an async tool already "
                "runs on the event loop, without a thread"
            )
        self.fn = fn
        self.name = name or fn.__name__
        summary, param_docs = parse_docstring(fn.__doc__)
        self.signature = Signature(fn, self.name, param_docs)
        if not summary and self.signature.model_parameter is not None:
            summary, _ = parse_docstring(self.signature.model.__doc__)
        self.is_async = inspect.iscoroutinefunction(fn)
        self.inline = inline  # a sync function called on the event loop's thread, not in a worker thread
        self.definition = ToolDefinition(
            name=self.name,
            description=description if description is not None else summary,
            parameters=json.dumps(self.signature.schema, separators=(",", ":")),
            requires_approval=requires_approval,
            idempotent=idempotent,
            timeout_ms=timeout_ms,
            retry=retry,
        )
        self._parameters_hint = describe_parameters(self.signature.schema)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Call the underlying function directly (no validation): tools stay usable as functions."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Tool {self.name!r}>"

    async def invoke(
        self, arguments: str, tool_call_id: str, *, threads: anyio.CapacityLimiter | None = None
    ) -> ToolResult:
        """Run one call: validate ``arguments`` (JSON text), call the function, encode its result.

        Invalid JSON, schema violations and exceptions raised by the tool become
        a ``ToolFailure``; so does a cancellation that does not come from the
        caller (an async tool awaiting a future that something else cancelled),
        which would otherwise end the call with no result. The caller's own
        cancellation propagates (a sync tool's thread is abandoned and its late
        result dropped). A sync tool runs in a worker thread under ``threads``
        (anyio's shared default limiter when None). Timeouts are the caller's
        job, since they need the session's clock.
        """
        validated = self.validate(arguments, tool_call_id)
        if isinstance(validated, ToolFailure):
            return validated
        kwargs = self.signature.arguments(validated, tool_call_id)
        try:
            if self.is_async:
                value: Any = await self.fn(**kwargs)  # type: ignore[call-arg, misc]
            elif self.inline:
                value = self.fn(**kwargs)  # type: ignore[call-arg]
            else:
                call = functools.partial(self.fn, **kwargs)
                value = await anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=threads)
        except Exception as error:
            policy = self.definition.retry
            code = failure_code(error, policy.on if policy is not None else ())
            return ToolFailure(error=_messages.raised(self.name, tool_call_id, error), code=code)
        except anyio.get_cancelled_exc_class():
            if cancelled_by_caller():
                raise
            return ToolFailure(error=_messages.cancelled_inside(self.name, tool_call_id), code="cancelled")
        return self._encode(value, tool_call_id)

    def validate(self, arguments: str, tool_call_id: str) -> pydantic.BaseModel | ToolFailure:
        """``arguments`` (JSON text) validated against the tool's parameters, or the failure the model reads."""
        try:
            return self.signature.model.model_validate_json(arguments or "{}")
        except ValidationError as error:
            message = _messages.invalid_arguments(self.name, tool_call_id, error, self._parameters_hint)
            return ToolFailure(error=message, code="invalid-arguments")

    async def attempt(
        self,
        arguments: str,
        tool_call_id: str,
        resumption: Resumption | None = None,
        *,
        threads: anyio.CapacityLimiter | None = None,
    ) -> ToolOutcome:
        """One attempt at a call: a result, a question for a person, or a remote task (see :class:`Resumption`).

        A ``@tool`` function neither asks nor hands work to a task, so it runs
        (:meth:`invoke`); asked to resume a call, it fails, saying so. Tools that
        can suspend a call (an MCP server's, a remote agent's) override this.
        """
        if resumption is not None:
            return ToolFailure(error=_messages.cannot_resume(self.name, tool_call_id))
        return await self.invoke(arguments, tool_call_id, threads=threads)

    async def timed_out(self, tool_call_id: str, timeout_ms: int) -> None:
        """Called once the call ``tool_call_id`` was stopped by its timeout of ``timeout_ms`` ms, before its
        failure is reported. Nothing by default; a tool whose call started work that outlives the call (an agent
        tool's child session) ends that work here."""

    def _encode(self, value: Any, tool_call_id: str) -> ToolResult:
        if isinstance(value, str):
            return ToolSuccess(content=value)
        try:
            return ToolSuccess(content=pydantic_core.to_json(value).decode())
        except pydantic_core.PydanticSerializationError as error:
            return ToolFailure(error=_messages.unencodable(self.name, tool_call_id, value, error), code="unencodable")


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    idempotent: bool = False,
    timeout_ms: int | None = None,
    inline: bool = False,
    retry: ToolRetry | None = None,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    idempotent: bool = False,
    timeout_ms: int | None = None,
    inline: bool = False,
    retry: ToolRetry | None = None,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Declare a tool: ``@tool`` or ``@tool(requires_approval=True, idempotent=True, timeout_ms=5000, name=...)``.

    ``name`` defaults to the function's name and ``description`` to its
    docstring's text before the first section; each parameter's description
    comes from the docstring's ``Args:`` (or ``:param x:``) lines.
    ``requires_approval`` makes each call wait for ``tool-call-approved``;
    ``idempotent`` tells the model (and a resumed session) that running it
    twice is safe; ``timeout_ms`` bounds one call, measured on the session's clock.

    A sync function's thread cannot be interrupted: when its call times out or
    is cancelled, the thread runs to its end and its result is dropped.

    ``inline=True`` calls a sync function on the event loop's thread instead
    of a worker thread: for pure, quick functions (arithmetic, a lookup in a
    dict, formatting), where the thread hand-offs cost far more than the call.
    It blocks the loop while it runs, so no timeout can stop it and nothing else
    runs meanwhile: never use it for I/O or anything that may take long.

    ``retry`` (see :func:`~effects.retry`) tries a failed call again, after a
    backoff, with the same tool call id: only on an ``idempotent`` tool (else
    ``ValueError``, unless the policy says ``force=True``). Each attempt is in the log.
    """

    def wrap(function: Callable[P, R]) -> Tool[P, R]:
        return Tool(
            function,
            name=name,
            description=description,
            requires_approval=requires_approval,
            idempotent=idempotent,
            timeout_ms=timeout_ms,
            inline=inline,
            retry=retry,
        )

    return wrap(fn) if fn is not None else wrap
