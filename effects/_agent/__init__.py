"""The agent runtime: the agent's effects run by a machine, behind the ``Agent`` / ``Session`` facade,
and durable sessions over a store (``open_session``)."""

# Names imported as themselves (`X as X`) are for the Temporal workers, not public names.
from ._agent_tool import CALLER_CANCELLED as CALLER_CANCELLED
from ._agent_tool import AgentTool as AgentTool
from ._agent_tool import child_result as child_result
from ._agent_tool import too_deep as too_deep
from ._context import EffectContext
from ._durable import INTERRUPTED, complete_interrupted, interrupted_calls
from ._events import ChildEvent, SessionClosed, SessionOpened, TextDelta
from ._ids import IdSource, RandomIds, SequentialIds
from ._output import NoOutput, OutputType, OutputValidator
from ._redact import MIN_SECRET_CHARS, REDACTED
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
