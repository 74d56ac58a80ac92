"""The agent runtime: the agent's effects run by a machine, behind the ``Agent`` / ``Session`` facade,
and durable sessions over a store (``open_session``)."""

from ._context import EffectContext
from ._durable import INTERRUPTED, complete_interrupted, interrupted_calls
from ._events import ChildEvent, SessionClosed, SessionOpened, TextDelta
from ._ids import IdSource, RandomIds, SequentialIds
from ._output import NoOutput, OutputType, OutputValidator
from ._redact import MIN_SECRET_CHARS, REDACTED

# For the Temporal workers (not public names):
from ._redact import RedactingDispatch as RedactingDispatch
from ._redact import Redactor as Redactor
from ._resume import open_session
from ._runtime import AgentRuntime
from ._session import Agent
from ._session_handle import Session, SessionStopped

__all__ = [
    "INTERRUPTED",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "Agent",
    "AgentRuntime",
    "ChildEvent",
    "EffectContext",
    "IdSource",
    "NoOutput",
    "OutputType",
    "OutputValidator",
    "RandomIds",
    "SequentialIds",
    "Session",
    "SessionClosed",
    "SessionOpened",
    "SessionStopped",
    "TextDelta",
    "complete_interrupted",
    "interrupted_calls",
    "open_session",
]
