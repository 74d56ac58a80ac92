"""``ScriptedModel``: a deterministic model for tests and demos, driven by a script.

::

    model = ScriptedModel([
        call_tools(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})),   # two calls in parallel
        fail("rate limited", retryable=True),                                # a transient failure
        lambda context: say(f"The sums are {results(context)}."),           # a reply computed from the context
    ])

A script is a list of steps, or one function of the :class:`~agent_core.LlmContext`
called for every model call. A step is a :class:`ModelReply`, an exception to
raise (``fail(...)`` gives a :class:`ModelError`), or a function of the context
returning either. A step is consumed when the call delivers it: a call
cancelled while streaming leaves its step for the next call, so a restarted
call answers the same. Text streams to ``on_text`` in word-sized chunks
(``chunk_size`` for fixed-size chunks). Tool calls without an id get
``call-1``, ``call-2``... in the order they are delivered. Usage is estimated
(about four characters per token) when a reply does not give it.
"""

from __future__ import annotations

import asyncio
import json
import re
import types
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeAlias

import anyio.lowlevel
import msgspec

from agent_core import LlmContext, Usage, context_tokens

from ._model import LOAD_OLDER_MESSAGES, LOAD_TOOL_CALL_RESULTS, ModelError, ModelReply, ModelToolCall, TextSink

Outcome: TypeAlias = ModelReply | BaseException
Step: TypeAlias = Outcome | Callable[[LlmContext], Outcome]
Script: TypeAlias = Sequence[Step] | Callable[[LlmContext], Outcome]

_WORDS = re.compile(r"\S+\s*|\s+")


@types.coroutine
def _loop_turn() -> Generator[None, None, None]:
    """Let the asyncio loop run once before going on: what ``asyncio.sleep(0)`` does (a bare yield, which the task
    answers by scheduling its next step)."""
    yield


class ScriptedModel:
    """A :class:`~effects.Model` that answers from a script; deterministic, instant, offline.

    ``calls`` keeps every context the model was asked with, for assertions
    (``keep_calls=False`` keeps none, for long runs such as benchmarks).
    """

    def __init__(
        self, script: Script, *, chunk_size: int = 0, estimate_usage: bool = True, keep_calls: bool = True
    ) -> None:
        if chunk_size < 0:
            raise ValueError(f"expected chunk_size >= 0 (0: word-sized chunks), got {chunk_size}")
        self._script = script
        self._position = 0
        self._next_id = 1
        self._chunk_size = chunk_size
        self._estimate_usage = estimate_usage
        self._keep_calls = keep_calls
        self.calls: list[LlmContext] = []

    @property
    def steps_left(self) -> int | None:
        """How many steps of a list script remain (``None`` for a function script)."""
        return None if callable(self._script) else len(self._script) - self._position

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Deliver the next step: stream its text, return its reply, or raise its exception."""
        if self._keep_calls:
            self.calls.append(context)
        outcome = self._outcome(context)
        if isinstance(outcome, BaseException):
            self._position += 1
            raise outcome
        asyncio_loop = asyncio._get_running_loop() is not None
        for chunk in self._chunks(outcome.text):
            on_text(chunk)
            # A checkpoint between chunks: a call can be cancelled mid-stream, as a real one can. (Under asyncio
            # anyio's checkpoint is `asyncio.sleep(0)`, reached through three more calls and a look-up of the
            # backend; `_loop_turn` is what that sleep does, with one object instead of two.)
            if asyncio_loop:
                await _loop_turn()
            else:
                await anyio.lowlevel.checkpoint()
        self._position += 1
        return self._finish(outcome, context)

    def _outcome(self, context: LlmContext) -> Outcome:
        script = self._script
        if callable(script):
            step: Step = script(context)
        elif self._position < len(script):
            step = script[self._position]
        else:
            raise RuntimeError(
                f"the scripted model has no step left: its script has {len(script)} steps and all were used; "
                "add a step (say(...), call_tools(...)) for this model call"
            )
        outcome = step(context) if callable(step) else step
        if not isinstance(outcome, (ModelReply, BaseException)):
            raise TypeError(
                f"expected a script step to give a ModelReply or an exception, got {type(outcome).__name__}; "
                "build replies with say(...), call_tools(...) or fail(...)"
            )
        return outcome

    def _chunks(self, text: str) -> list[str]:
        if not text:
            return []
        size = self._chunk_size
        if size:
            return [text[i : i + size] for i in range(0, len(text), size)]
        return _WORDS.findall(text)

    def _finish(self, reply: ModelReply, context: LlmContext) -> ModelReply:
        calls = reply.tool_calls
        for call in calls:
            if not call.id:
                calls = self._with_ids(calls)
                break
        usage = reply.usage
        if self._estimate_usage and usage == Usage():
            usage = estimate_usage(context, reply)
        if calls is reply.tool_calls and usage is reply.usage:
            return reply  # a frozen reply that needs nothing more is delivered as it is
        return msgspec.structs.replace(reply, tool_calls=calls, usage=usage)

    def _with_ids(self, calls: tuple[ModelToolCall, ...]) -> tuple[ModelToolCall, ...]:
        return tuple(call if call.id else msgspec.structs.replace(call, id=self._new_id()) for call in calls)

    def _new_id(self) -> str:
        call_id = f"call-{self._next_id}"
        self._next_id += 1
        return call_id


def estimate_usage(context: LlmContext, reply: ModelReply) -> Usage:
    """About four characters per token, counting what the call sent and what it answered."""
    answered = len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.tool_calls)
    return Usage(input_tokens=context_tokens(context), output_tokens=-(-answered // 4))


# --- helpers to write scripts ---------------------------------------------------------


def say(text: str, *, usage: Usage | None = None) -> ModelReply:
    """A reply that answers with ``text`` and calls no tool: it completes the turn."""
    return ModelReply(text=text, usage=usage or Usage(), finish_reason="stop")


ToolCallSpec: TypeAlias = tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str]


def call_tools(*calls: ToolCallSpec, text: str = "", usage: Usage | None = None) -> ModelReply:
    """A reply that calls tools, in parallel when several: ``(name, arguments)`` or ``(name, arguments, id)``.

    ``arguments`` is a dict (JSON-encoded here) or a string sent as is, which
    lets a script send malformed JSON on purpose. ``text`` is said first.
    """
    if not calls:
        raise ValueError("call_tools needs at least one (name, arguments) pair; use say(...) to answer without tools")
    built = []
    for spec in calls:
        name, arguments = spec[0], spec[1]
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
        built.append(ModelToolCall(id=spec[2] if len(spec) == 3 else "", name=name, arguments=encoded))
    return ModelReply(text=text, tool_calls=tuple(built), usage=usage or Usage(), finish_reason="tool_calls")


def fail(
    message: str = "the model is overloaded", *, retryable: bool = True, retry_after_ms: int | None = None
) -> ModelError:
    """A failed model call: retryable by default, like a rate limit or a 5xx."""
    return ModelError(message, retryable=retryable, retry_after_ms=retry_after_ms)


def load_older_messages() -> ModelReply:
    """A reply calling the internal tool that widens the context window with older messages."""
    return call_tools((LOAD_OLDER_MESSAGES, {}))


def load_tool_call_results(*tool_call_ids: str) -> ModelReply:
    """A reply calling the internal tool that brings past tool calls (by id) into the context."""
    return call_tools((LOAD_TOOL_CALL_RESULTS, {"tool_call_ids": list(tool_call_ids)}))
