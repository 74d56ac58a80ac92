"""An agent whose one tool needs a person's approval (``--agent temporal._approving_agent:agent``, with ``tests``
on the path): every message makes the model call ``refund``, which waits for approval, then answer."""

from __future__ import annotations

from effects import Agent, tool
from effects.testing import ScriptedModel, call_tools, say


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


agent = Agent(ScriptedModel([call_tools(("refund", {"order": "o-1"})), say("done")]), tools=[refund])
