"""The activities a worker runs: open a session, append to its log, call the model, call a tool.

The model and tool activities run the agent's own effect handlers
(``call_llm``, ``call_tool``) and return the inputs the handler dispatched.
The model's loads the state from the store, waiting out a store that is away
(for ``STORE_WAIT_SECONDS``); the tool's is handed the call and reads nothing.
They heartbeat while they run, so a dead worker is noticed within the
heartbeat timeout and a cancelled effect (its key gone from ``effects_at``) stops.
Each runs with the model and tools of the session's agent: the worker's own,
or for a child session the agent of the agent tool it names (see ``_agents``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from msgspec import json as msgjson
from temporalio import activity
from temporalio.exceptions import ApplicationError

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    CallLlm,
    CallTool,
    ToolCallCompleted,
    ToolFailure,
    effects_at,
    encode_input,
    encode_state,
    initial_state,
    tag_of,
)

from .._agent import AgentRuntime, AgentTool, RedactingDispatch, Redactor, SequentialIds
from .._agent.call_llm import call_llm
from .._agent.call_tool import call_tool
from .._clock import Clock, SystemClock
from .._model import Model
from .._store import StoreUnavailable
from .._tools import Tool, Toolbox
from ._agents import WorkerAgent, worker_agents
from ._logs import SessionLogs
from ._wire import APPEND, CALL_LLM, CALL_TOOL, OPEN, Appended, Batch, EffectRef, Loaded, SessionArgs, ToolCall

_CONFIG = msgjson.Decoder(AgentConfig)

HEARTBEAT_SECONDS = 1.0
"""How often a running activity heartbeats (the workflow's ``heartbeat_ms`` is the timeout)."""

STORE_WAIT_SECONDS = 60.0
"""How long the model's activity waits for a store that is away before it fails (the workflow then fails the call)."""

_STORE_DELAYS = (0.1, 0.2, 0.5, 1.0)


class _Collect:
    """The ``Dispatch`` an activity gives a handler: inputs are collected and returned to the workflow."""

    def __init__(self) -> None:
        self.inputs: list[AgentInput] = []

    def __call__(self, inp: AgentInput, /) -> None:
        self.inputs.append(inp)

    async def dispatch_committed(self, inp: AgentInput, /) -> bool:
        # The workflow commits `tool-call-started` before it starts the activity, so a handler never waits here.
        raise RuntimeError(
            f"an activity cannot wait for {tag_of(inp)!r} to be committed; the workflow commits it first"
        )

    def emit(self, event: Any, /) -> None:
        """Streamed text is for live subscribers of one process; a worker has none."""


class SessionActivities:
    """The activities of one worker: its store, model, tools and clock. Register :meth:`all` with the worker."""

    def __init__(
        self,
        logs: SessionLogs,
        model: Model,
        tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (),
        clock: Clock | None = None,
        config: AgentConfig | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        self.logs = logs
        self.secrets = Redactor(secrets).secrets  # checked now, where the developer passes them
        self.model = model
        self.toolbox = Toolbox(tools)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.config = config if config is not None else AgentConfig()
        # Its own agent and those its agent tools reach: a call of an agent tool is a child session of its agent.
        self.agents = worker_agents(model, self.toolbox, self.config, self.secrets)

    def all(self) -> list[Callable[..., Any]]:
        """The activity functions to pass to ``temporalio.worker.Worker(activities=...)``."""
        return [self.open, self.append, self.call_llm, self.call_tool]

    @activity.defn(name=OPEN)
    async def open(self, args: SessionArgs) -> Loaded:
        """Create or adopt the session (first run) or load it after record ``args.seq`` (a continued run).

        A child session's (``args.agent``) call arguments are validated first: arguments its agent tool refuses
        make no session, and come back as the call's failure (``Loaded.refused``).
        """
        agent = self._agent(args.session_id, args.agent)
        task = ""
        if args.agent and args.seq == 0:  # a continued run's log has the message: its first run folded it first
            outcome = self._task(args)
            if isinstance(outcome, ToolCallCompleted):
                return Loaded(seq=0, state="", refused=encode_input(outcome, format="json").decode())
            task = outcome
        seq, state = await asyncio.to_thread(
            self.logs.open,
            args.session_id,
            args.seq,
            args.config,
            agent.config,
            agent.toolbox.definitions(),
            self.clock.now_ms(),
        )
        state_json = encode_state(state, format="json").decode()
        return Loaded(seq=seq, state=state_json, children=agent.child_agents(), task=task)

    def _task(self, args: SessionArgs) -> str | ToolCallCompleted:
        """The child session's user message, from the call's arguments; the call's failure if they do not validate."""
        lineage = _CONFIG.decode(args.config).lineage if args.config else None
        call_id = lineage.parent_tool_call_id if lineage is not None else args.session_id
        outcome = _tool_named(self.agents, args.agent).task(args.arguments, call_id)
        if isinstance(outcome, ToolFailure):
            return ToolCallCompleted(timestamp=self.clock.now_ms(), tool_call_id=call_id, result=outcome)
        return outcome

    def _agent(self, session_id: str, name: str) -> WorkerAgent:
        agent = self.agents.get(name)
        if agent is None:
            raise ApplicationError(
                f"session {session_id!r} runs the agent of agent tool {name!r}, which this worker's agent does not "
                f"reach (it has {sorted(n for n in self.agents if n)}); expected every worker of a task queue to "
                "run the same agent",
                non_retryable=True,
            )
        return agent

    @activity.defn(name=APPEND)
    async def append(self, batch: Batch) -> Appended:
        """Append the workflow's batch after record ``batch.expected``; returns the log's new length (or what an
        earlier attempt wrote: see :class:`Appended`)."""
        return await asyncio.to_thread(self.logs.append, batch.session_id, batch.expected, batch.inputs)

    @activity.defn(name=CALL_LLM)
    async def call_llm(self, ref: EffectRef) -> list[str]:
        """Ask the model for the ``call-llm`` effect ``ref`` names; returns the inputs its answer makes."""
        agent = self._agent(ref.session_id, ref.agent)
        state, eff = await self._effect(ref, CallLlm)
        runtime = self._runtime(agent, state.timestamp)
        return await _heartbeating(lambda ctx, out: call_llm(ctx, eff, state, out), runtime)

    @activity.defn(name=CALL_TOOL)
    async def call_tool(self, call: ToolCall) -> list[str]:
        """Run ``call`` (already started in the log); returns its ``tool-call-completed``."""
        eff = CallTool(tool_call_id=call.tool_call_id, name=call.name, parameters=call.parameters)
        # The handler sees no pending call in an empty state, so it runs the tool at once: the workflow started it.
        running = initial_state()
        runtime = self._runtime(self._agent(call.session_id, call.agent), call.floor)
        return await _heartbeating(lambda ctx, out: call_tool(ctx, eff, running, out), runtime)

    def _runtime(self, agent: WorkerAgent, floor: int) -> AgentRuntime:
        # Ids continue from the state (the runtime skips used ones), so a retried call makes the same ids.
        return AgentRuntime(
            agent.model, agent.toolbox, self.clock, SequentialIds(), floor=lambda: floor, secrets=agent.secrets
        )

    async def _state_at(self, ref: EffectRef) -> AgentState:
        """The state after record ``ref.seq``, waiting (heartbeating) while the store is away, up to a bound."""
        waited, attempt = 0.0, 0
        while True:
            try:
                return await asyncio.to_thread(self.logs.state_at, ref.session_id, ref.seq)
            except StoreUnavailable:
                if waited >= STORE_WAIT_SECONDS:
                    raise
            delay = _STORE_DELAYS[min(attempt, len(_STORE_DELAYS) - 1)]
            activity.heartbeat()
            await asyncio.sleep(delay)
            waited, attempt = waited + delay, attempt + 1

    async def _effect(self, ref: EffectRef, kind: type[Any]) -> tuple[AgentState, Any]:
        state = await self._state_at(ref)
        eff = effects_at(state).get(ref.key)
        if not isinstance(eff, kind):
            raise ApplicationError(
                f"session {ref.session_id!r}: expected effect {ref.key!r} in the state after record {ref.seq}, "
                f"found {type(eff).__name__ if eff is not None else 'none'}; the log and the workflow disagree",
                non_retryable=True,
            )
        return state, eff


async def _heartbeating(body: Callable[[AgentRuntime, Any], Awaitable[None]], ctx: AgentRuntime) -> list[str]:
    """Run the handler, heartbeating meanwhile (a cancellation from the workflow arrives through the heartbeat)."""
    out = _Collect()
    # Values from the model and the tools enter here, as in a local session: the worker's secrets never reach the log.
    task = asyncio.ensure_future(body(ctx, RedactingDispatch(out, ctx.redactor) if ctx.redactor else out))
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=HEARTBEAT_SECONDS)
            activity.heartbeat()
        task.result()
    finally:
        task.cancel()
    return [encode_input(i, format="json").decode() for i in out.inputs]


def _tool_named(agents: dict[str, WorkerAgent], name: str) -> AgentTool:
    """The agent tool ``name`` among those the worker's agents have (one agent per name: see ``worker_agents``)."""
    return next(agent.children[name] for agent in agents.values() if name in agent.children)
