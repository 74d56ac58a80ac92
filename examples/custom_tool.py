"""Custom tools: arguments from a pydantic model, and a tool that waits for a person's approval.

The model's JSON arguments are validated by pydantic before the tool runs;
a mistake comes back to the model as an error it can fix. A tool declared with
``requires_approval=True`` runs only after ``session.approve(id)``; a denial's
reason is what the model reads. ``tool_call_id`` is a stable idempotency key.
Output includes: refund-2 -> failure: denied by the user: over the limit
"""

import asyncio
from typing import Literal

from pydantic import BaseModel, Field

from agent_core import ToolSuccess
from effects import Agent, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say


class Order(BaseModel):
    """Look up an order in the shop's database."""

    order_id: str = Field(pattern=r"^A\d{3}$", description="the order number, like A123")
    fields: list[Literal["status", "total", "items"]] = Field(default=["status"], description="what to return")


ORDERS = {"A123": {"status": "delivered", "total": 42.5, "items": ["kettle"]}}


@tool(idempotent=True)
async def find_order(order: Order) -> dict[str, object]:
    record = ORDERS[order.order_id]
    return {name: record[name] for name in order.fields}


@tool(requires_approval=True)
def refund(order_id: str, amount: float, tool_call_id: str) -> str:
    """Refund part of an order to the customer's card.

    Args:
        order_id: the order number
        amount: how much to refund, in euros
    """
    # A real payment API would take tool_call_id as its idempotency key: a resumed session never pays twice.
    return f"refunded {amount:.2f} EUR for {order_id} (key {tool_call_id})"


model = ScriptedModel(
    [
        call_tools(("find_order", {"order_id": "123"})),  # wrong format: the model reads why and retries
        call_tools(("find_order", {"order_id": "A123", "fields": ["status", "total"]})),
        call_tools(
            ("refund", {"order_id": "A123", "amount": 10}, "refund-1"),
            ("refund", {"order_id": "A123", "amount": 500}, "refund-2"),
        ),
        say("I refunded 10.00 EUR; the 500 EUR refund was not approved."),
    ]
)


async def main() -> None:
    print("find_order's schema:", find_order.definition.parameters)
    agent = Agent(model, tools=[find_order, refund], clock=ManualClock(), ids=SequentialIds())
    async with agent.running() as session:
        session.send("Order A123 arrived broken. Refund me 10 euros, or 500 if you can.")
        await session.settled()
        print("phase:", session.phase, "- waiting for:", session.state.turn and session.state.turn.awaiting_ids)
        session.approve("refund-1")
        session.deny("refund-2", "over the limit")
        await session.settled()
        state = session.state
    for call_id in state.tool_call_log:
        result = state.tool_calls[call_id].result
        text = f"success: {result.content}" if isinstance(result, ToolSuccess) else f"failure: {result and result.error}"
        print(f"{call_id} -> {text}")
    print("assistant:", state.messages[-1].content)


asyncio.run(main())
