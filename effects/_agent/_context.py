"""What the agent's effect handlers may use: a narrow context, not the whole runtime.

A leaf module: the handlers (``call_llm``, ``call_tool``, ``wait_until``) import
only this; the runtime that implements it imports them.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from agent_core import AgentState, LlmContext, Usage

from .._clock import Clock
from .._model import Model
from .._money import BudgetPools
from .._store import EventStore
from .._tools import Toolbox
from ._output import OutputValidator

DEFAULT_MODEL_TIMEOUT_MS = 600_000
"""A model call that has not answered after 10 minutes fails, retryable (as the OpenAI SDK's own default)."""


class EffectContext(Protocol):
    """The model, the tools, the clock, and how new inputs get their timestamps and ids."""

    @property
    def model(self) -> Model:
        """The session's model."""
        ...

    def model_call(self, state: AgentState) -> tuple[Model, LlmContext]:
        """The model that answers in ``state`` (the active agent's, with handoffs) and the context it is sent."""
        ...

    @property
    def toolbox(self) -> Toolbox:
        """The session's tools."""
        ...

    @property
    def clock(self) -> Clock:
        """The session's clock (timers, tool deadlines)."""
        ...

    @property
    def model_timeout_ms(self) -> int | None:
        """How long a model call may take on the session's clock (``None``: unbounded)."""
        ...

    @property
    def store(self) -> EventStore | None:
        """Where the session's log is kept (child sessions are kept there too); ``None``: nowhere."""
        ...

    @property
    def stored_id(self) -> str | None:
        """The id the session's log is kept under in ``store`` (``None``: no store). A fork's differs from
        the id its copied ``session-started`` names: its tool calls' child sessions are named after this one."""
        ...

    def call_open(self, tool_call_id: str) -> bool:
        """Whether the session's call ``tool_call_id`` is still to run (pending or running) in its current state."""
        ...

    def stamp(self, at_least: int = 0) -> int:
        """A timestamp for a new input: the clock's time, never earlier than any input the session has."""
        ...

    def tool_slot(self) -> AbstractAsyncContextManager[None]:
        """A place for one tool call within the session's and the process's bounds (``async with`` it)."""
        ...

    def new_message_id(self, kind: str, state: AgentState) -> str:
        """A new message id of ``kind`` that ``state`` does not use yet."""
        ...

    def output_validator(self, schema: str) -> OutputValidator:
        """The validator of the session's ``output_schema`` (the agent's output type when it gave that schema)."""
        ...

    @property
    def budget_pools(self) -> BudgetPools | None:
        """Where the session's budget pool is kept (``None``: the session has none)."""
        ...

    def new_reservation_id(self) -> str:
        """A new id for a reservation in a budget pool."""
        ...

    def price(self, usage: Usage, model: Model | None = None) -> int | None:
        """What a model call with ``usage`` cost (answered by ``model``, else the session's), in nano-units, by the
        session's pricing; ``None`` unpriced."""
        ...
