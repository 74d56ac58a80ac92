"""The agent runtime: the agent's effects run by a machine, behind the ``Agent`` / ``Session`` facade."""

from ._events import TextDelta
from ._ids import IdSource, RandomIds, SequentialIds
from ._runtime import AgentRuntime
from ._session import Agent, Session

__all__ = ["Agent", "AgentRuntime", "IdSource", "RandomIds", "SequentialIds", "Session", "TextDelta"]
