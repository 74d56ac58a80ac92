"""effects: the impure side of agent-core: the machine that runs effects, model adapters,
tools, stores and the command line. It imports ``agent_core``; never the reverse."""

from ._model import (
    INTERNAL_TOOLS,
    LOAD_OLDER_MESSAGES,
    LOAD_TOOL_CALL_RESULTS,
    Model,
    ModelError,
    ModelReply,
    ModelToolCall,
    TextSink,
    offered_tools,
)

# (machine exports)
# (agent runtime exports)
# (store exports)

__all__ = [
    "INTERNAL_TOOLS",
    "LOAD_OLDER_MESSAGES",
    "LOAD_TOOL_CALL_RESULTS",
    "Model",
    "ModelError",
    "ModelReply",
    "ModelToolCall",
    "TextSink",
    "offered_tools",
]
