"""Sessions as Temporal workflows: many workers on many machines, one log in PostgreSQL.

Install the extra: ``pip install 'agent-core[temporal]'``. A worker::

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
"""

from ._client import start_session, submit, turn_done
from ._wire import TASK_QUEUE, SessionArgs
from ._worker import session_worker
from ._workflow import FROM_OUTSIDE, SessionWorkflow

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
