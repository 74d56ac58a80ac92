"""Tools: plain functions the model can call, their schemas, and running one call."""

from ._limits import ToolLimits
from ._messages import timed_out as timed_out  # for the Temporal workflow's agent tool calls (not a public name)
from ._outcomes import InputRequired, Resumption, TaskCreated, ToolOutcome
from ._process import ProcessLimits, set_process_limits
from ._retry import error_code, retry
from ._schema import CALL_ID_PARAMETER
from ._slots import SessionSlots, Slots
from ._tool import Tool, tool
from ._toolbox import Toolbox

__all__ = [
    "CALL_ID_PARAMETER",
    "InputRequired",
    "ProcessLimits",
    "Resumption",
    "SessionSlots",
    "Slots",
    "TaskCreated",
    "Tool",
    "ToolLimits",
    "ToolOutcome",
    "Toolbox",
    "error_code",
    "retry",
    "set_process_limits",
    "tool",
]
