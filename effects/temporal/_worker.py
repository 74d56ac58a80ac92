"""A worker: runs sessions' workflows and their activities against one store, one model and one set of tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agent_core import AgentConfig

from .._clock import Clock
from .._model import Model
from .._store import EventStore
from .._tools import Tool
from ._activities import SessionActivities
from ._logs import SessionLogs
from ._wire import TASK_QUEUE
from ._workflow import SessionWorkflow

# Pure or already deterministic: loaded once, not again for every workflow run in the sandbox.
_PASSED_THROUGH = ("agent_core", "effects", "msgspec", "immutables", "anyio", "pydantic", "psycopg")


def session_worker(
    client: Client,
    store: EventStore,
    model: Model,
    *,
    tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (),
    task_queue: str = TASK_QUEUE,
    clock: Clock | None = None,
    config: AgentConfig | None = None,
    max_concurrent_activities: int = 100,
    secrets: Iterable[str] = (),
) -> Worker:
    """A ``temporalio`` worker for agent sessions; run it with ``async with worker:`` or ``await worker.run()``.

    Every worker of a task queue must have the same tools (a session records
    their definitions when it starts) and a store on the same database: any of
    them may run any session's next step. ``store`` is usually a
    :class:`~effects.PostgresStore`, shared by all workers. ``config`` is the
    configuration of sessions started without one. ``secrets`` are redacted from
    what the model and the tools return before it is logged, as with
    ``Agent(secrets=...)``; pass the same values to :func:`submit` for what people send.
    """
    activities = SessionActivities(SessionLogs(store), model, tools, clock, config, secrets)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*_PASSED_THROUGH)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[SessionWorkflow],
        activities=activities.all(),
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        max_concurrent_activities=max_concurrent_activities,
    )
