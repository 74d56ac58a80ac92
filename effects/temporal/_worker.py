"""A worker: runs sessions' workflows and their activities against one store, one model and one set of tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from agent_core import AgentConfig

from .._clock import Clock
from .._model import Model
from .._store import EventStore
from .._tools import Tool
from ._activities import SessionActivities
from ._logs import SessionLogs
from ._wire import TASK_QUEUE
from ._workflow import SessionWorkflow


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

    The workflow runs outside Temporal's sandbox. Its code is this package's
    workflow and the pure reducer (``agent_core``: no clock, randomness or I/O,
    checked by the layer tests); everything non-deterministic comes in through
    activities. Temporal's sandbox restricts what is imported inside it, and
    both were passed through it (their imports were the real modules), so its
    checks did not reach them; it cost about a fifth of a worker's CPU per
    round, entered again for every activation and every payload converted.
    """
    activities = SessionActivities(SessionLogs(store), model, tools, clock, config, secrets)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[SessionWorkflow],
        activities=activities.all(),
        workflow_runner=UnsandboxedWorkflowRunner(),
        max_concurrent_activities=max_concurrent_activities,
    )
