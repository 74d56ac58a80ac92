"""Tools: plain functions the model can call, their schemas, and running one call."""

from ._limits import ToolLimits
from ._schema import CALL_ID_PARAMETER
from ._tool import Tool, tool
from ._toolbox import Toolbox

__all__ = [
    "CALL_ID_PARAMETER",
    "Tool",
    "ToolLimits",
    "Toolbox",
    "tool",
]
