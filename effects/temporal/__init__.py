"""Sessions as Temporal workflows: many workers on many machines, one log in PostgreSQL.

Needs the ``temporal`` extra (a missing one raises :class:`~effects.providers.MissingExtra` with the command
that installs it). A worker::

    client = await Client.connect("localhost:7233")
    async with session_worker(client, PostgresStore(dsn), model, tools=[search]):
        ...

and a caller::

    await start_session(client, "session-1", config=AgentConfig(max_tool_calls=10))
    await submit(client, "session-1", UserMessageReceived(timestamp=0, message_id="user-1", content="hi"))

The workflow id is the session id; inputs from outside are Updates validated
by ``check``; model and tool calls are activities keyed by effect key; every
input is appended to the store, so ``replay --verify``, ``inspect``, ``fork``
and ``export`` work on these sessions as on any other.

A caller imports only Temporal's client: the worker's side (``session_worker``,
``SessionWorkflow``, ``FROM_OUTSIDE``, with ``temporalio.worker``) is
imported when one of them is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._extras import missing

try:
    import temporalio.client  # noqa: F401
except ImportError as error:
    raise missing("effects.temporal", "temporal", error) from None

from ._client import start_session, submit, turn_done
from ._wire import TASK_QUEUE, SessionArgs

if TYPE_CHECKING:
    from ._worker import session_worker
    from ._workflow import FROM_OUTSIDE, SessionWorkflow

_WORKER_SIDE = {"FROM_OUTSIDE": "._workflow", "SessionWorkflow": "._workflow", "session_worker": "._worker"}

__all__ = [
    "FROM_OUTSIDE",
    "TASK_QUEUE",
    "SessionArgs",
    "SessionWorkflow",
    "session_worker",
    "start_session",
    "submit",
    "turn_done",
]


def __getattr__(name: str) -> Any:
    """The worker's side, imported on first use."""
    module = _WORKER_SIDE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
