"""``AgentRuntime``: the agent's ``run_effect``, the clock and ids it stamps inputs with.

One runtime serves one session. It turns each effect ``effects_at`` derives
into a controller: ``call-llm`` asks the model, ``call-tool`` runs a tool,
``wait-until`` sleeps on the clock, and each dispatches its outcome back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from agent_core import (
    AgentInput,
    AgentState,
    CallLlm,
    CallTool,
    Effect,
    WaitUntil,
)

from .._clock import Clock
from .._machine import Controller, MachineEvent, effect
from .._model import Model
from .._tools import Toolbox
from ._ids import IdSource
from ._llm import call_llm
from ._tool_call import StartedTracker, call_tool, wait_until


class AgentRuntime:
    """What the agent's effects need: the model, the tools, the clock, the id source.

    ``current`` and ``emit`` are bound to the machine once it exists
    (:meth:`attach`). Timestamps never go backwards: each is at least the
    previous one and the state's, even if the wall clock is set back.
    """

    def __init__(self, model: Model, toolbox: Toolbox, clock: Clock, ids: IdSource) -> None:
        self.model = model
        self.toolbox = toolbox
        self.clock = clock
        self.ids = ids
        self.current: Callable[[], AgentState] = _not_attached
        self.emit: Callable[[MachineEvent], None] = _not_attached
        self.started_tracker: StartedTracker | None = None
        self._last = 0

    def attach(self, current: Callable[[], AgentState], emit: Callable[[MachineEvent], None]) -> None:
        """Bind the machine's ``current`` and ``emit``."""
        self.current = current
        self.emit = emit

    def stamp(self, at_least: int = 0) -> int:
        """The timestamp for a new input: the clock's time, never earlier than any stamped before."""
        now = max(self.clock.now_ms(), self._last, self.current().timestamp, at_least)
        self._last = now
        return now

    def new_message_id(self, kind: str) -> str:
        """A message id from the id source, skipping ids the session already uses (e.g. after a resume)."""
        state = self.current()
        used, queued = state.message_index, {m.id for m in state.queued}
        message_id = self.ids.new_id(kind)
        while message_id in used or message_id in queued:
            message_id = self.ids.new_id(kind)
        return message_id

    def run_effect(self, eff: Effect, state: AgentState, key: str) -> Controller[AgentInput]:
        """The controller that runs ``eff`` (derived from ``state`` under ``key``)."""
        if type(eff) is CallTool:
            return effect(lambda dispatch: call_tool(self, eff, state, dispatch))
        if type(eff) is CallLlm:
            return effect(lambda dispatch: call_llm(self, eff, state, dispatch))
        if type(eff) is WaitUntil:
            return effect(lambda dispatch: wait_until(self, eff, dispatch))
        raise TypeError(f"expected a CallLlm, CallTool or WaitUntil effect, got {type(eff).__name__} (key {key!r})")


def _not_attached(*_: object) -> NoReturn:
    raise RuntimeError("the agent runtime is not attached to a machine; call attach(current, emit) first")
