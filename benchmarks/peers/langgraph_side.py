"""LangGraph running the workload in its recommended forms, with its checkpointers.

Forms: the prebuilt agent (``langgraph.prebuilt.create_react_agent``, and its
successor ``langchain.agents.create_agent`` when ``langchain`` is installed),
and a hand-built ``StateGraph`` (agent node, ``ToolNode``, ``tools_condition``)
with ``add_messages``, or with its beta ``DeltaChannel`` that checkpoints only
the new messages. Each graph with a checkpointer runs with LangGraph's default
``durability="async"`` (checkpoints written while the next step runs), and
with ``"exit"`` (one checkpoint when the run ends: a crash loses the turn);
with SQLite also with ``"sync"`` (each step's checkpoint written before the
next step starts), passed to ``invoke``/``ainvoke`` as its docs show.

Persistence: ``none`` (no checkpointer; the history is passed back in each
turn, as its docs show for stateless use), ``memory`` (``InMemorySaver``),
``sqlite`` (``SqliteSaver`` when driven with ``invoke``, ``AsyncSqliteSaver``
with ``ainvoke``; both from langgraph-checkpoint-sqlite, WAL).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.types import Durability

from .langgraph_model import FakeChatModel, Mode, make_tools
from .workload import SESSION_ID, Contender, Conversation, Opener, Persistence, Resumer, Tally

DATABASE = "langgraph.sqlite"
CONFIG: RunnableConfig = {"configurable": {"thread_id": SESSION_ID}}
Graph = CompiledStateGraph[Any, Any, Any, Any]
Builder = Callable[[FakeChatModel, list[BaseTool], Mode, BaseCheckpointSaver[Any] | None], Graph]


def prebuilt(model: FakeChatModel, tools: list[BaseTool], mode: Mode, saver: BaseCheckpointSaver[Any] | None) -> Graph:
    """``create_react_agent``: deprecated since LangGraph 1.0 in favour of ``create_agent``, still shipped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(model, tools, checkpointer=saver)


def langchain_agent(
    model: FakeChatModel, tools: list[BaseTool], mode: Mode, saver: BaseCheckpointSaver[Any] | None
) -> Graph:
    """``langchain.agents.create_agent``: the prebuilt agent's current name (a LangGraph graph)."""
    from langchain.agents import create_agent

    return create_agent(model, tools, checkpointer=saver)


class DeltaState(TypedDict):
    """A messages state whose channel checkpoints deltas (beta)."""

    messages: Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer)]


def hand_built(schema: type[Any]) -> Builder:
    """A ``StateGraph`` builder over ``schema``: agent node, ``ToolNode``, ``tools_condition``, back to the agent."""

    def build(model: FakeChatModel, tools: list[BaseTool], mode: Mode, saver: BaseCheckpointSaver[Any] | None) -> Graph:
        bound = model.bind_tools(tools)

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [bound.invoke(state["messages"])]}

        async def aagent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await bound.ainvoke(state["messages"])]}

        builder = StateGraph(schema)
        if mode == "sync":
            builder.add_node("agent", agent, input_schema=schema)
        else:
            builder.add_node("agent", aagent, input_schema=schema)
        builder.add_node("tools", ToolNode(tools))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        return builder.compile(checkpointer=saver)

    return build


class GraphConversation:
    """A LangGraph thread: a turn is one ``invoke``/``ainvoke`` with the new user message."""

    def __init__(self, graph: Graph, tally: Tally, mode: Mode, *, carry: bool, durability: Durability) -> None:
        self.graph, self.tally, self.mode = graph, tally, mode
        self.carry = carry
        self.history: list[BaseMessage] = []
        # LangGraph's default is "async"; it warns when a durability is given without a checkpointer.
        self.options: dict[str, Any] = {} if carry or durability == "async" else {"durability": durability}

    async def turn(self, text: str) -> str:
        """Run the graph on the new message (after the whole history when there is no checkpointer)."""
        message = HumanMessage(text)
        payload = {"messages": [*self.history, message] if self.carry else [message]}
        if self.mode == "sync":
            out = self.graph.invoke(payload, CONFIG, **self.options)
        else:
            out = await self.graph.ainvoke(payload, CONFIG, **self.options)
        messages: list[BaseMessage] = out["messages"]
        if self.carry:
            self.history = messages
        return str(messages[-1].content)


@asynccontextmanager
async def checkpointer(
    persistence: Persistence, mode: Mode, path: Path
) -> AsyncIterator[BaseCheckpointSaver[Any] | None]:
    """The checkpointer LangGraph's docs pair with ``persistence`` and the drive mode."""
    if persistence == "none":
        yield None
    elif persistence == "memory":
        yield InMemorySaver()
    elif mode == "sync":
        with SqliteSaver.from_conn_string(str(path)) as saver:
            yield saver
    else:
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield saver


@dataclass(frozen=True)
class Form:
    """One way of building the agent with LangGraph."""

    name: str
    build: Builder
    persistences: tuple[Persistence, ...] = ("none", "memory", "sqlite")


def forms() -> list[Form]:
    """The forms available here (``create_agent`` needs the ``langchain`` package)."""
    found = [Form("create_react_agent", prebuilt)]
    if importlib.util.find_spec("langchain") is not None:
        found.append(Form("create_agent", langchain_agent))
    found.append(Form("StateGraph", hand_built(MessagesState)))
    found.append(Form("StateGraph+delta", hand_built(DeltaState), ("memory", "sqlite")))
    return found


DURABILITIES: dict[Persistence, tuple[Durability, ...]] = {
    "none": ("async",),
    "memory": ("async", "exit"),
    "sqlite": ("async", "sync", "exit"),
}
"""The durability modes run with each persistence (``async`` is LangGraph's default; without a checkpointer
none applies; in memory ``sync`` waits for a write that cannot fail)."""
GUARANTEE: dict[Durability, str] = {"async": "background", "sync": "input", "exit": "turn"}
"""What a crash may lose with a SQLite checkpointer, by durability (see :mod:`.guarantees`)."""


def opener(form: Form, mode: Mode, persistence: Persistence, durability: Durability) -> Opener:
    """Opens a new thread of ``form`` driven in ``mode`` with ``persistence``, run with ``durability``."""

    @asynccontextmanager
    async def open_conversation(directory: Path) -> AsyncIterator[Conversation]:
        tally = Tally()
        async with checkpointer(persistence, mode, directory / DATABASE) as saver:
            graph = form.build(FakeChatModel(tally), make_tools(tally, mode), mode, saver)
            yield GraphConversation(graph, tally, mode, carry=saver is None, durability=durability)

    return open_conversation


def resumer(form: Form, mode: Mode) -> Resumer:
    """Reopens the SQLite checkpointer, builds the graph and loads the thread's state (``get_state``)."""

    async def resume(directory: Path) -> int:
        tally = Tally()
        async with checkpointer("sqlite", mode, directory / DATABASE) as saver:
            graph = form.build(FakeChatModel(tally), make_tools(tally, mode), mode, saver)
            snapshot = graph.get_state(CONFIG) if mode == "sync" else await graph.aget_state(CONFIG)
            return len(snapshot.values["messages"])

    return resume


def contenders(
    modes: tuple[Mode, ...] = ("async", "sync"), durabilities: tuple[Durability, ...] = ("async", "sync", "exit")
) -> list[Contender]:
    """Every form in every drive mode of ``modes``, every persistence it applies to and every durability of
    ``durabilities`` that applies to that persistence (the default ``async`` is not named in the form)."""
    found = []
    for form in forms():
        for mode in modes:
            for persistence in form.persistences:
                saver = {"none": "no checkpointer", "memory": "InMemorySaver"}.get(
                    persistence, "SqliteSaver" if mode == "sync" else "AsyncSqliteSaver"
                )
                for durability in (d for d in DURABILITIES[persistence] if d in durabilities):
                    named = "" if durability == "async" else f" durability={durability}"
                    found.append(
                        Contender(
                            framework="langgraph",
                            form=f"{form.name} ({mode}){named}",
                            persistence=persistence,
                            open=opener(form, mode, persistence, durability),
                            resume=resumer(form, mode) if persistence == "sqlite" else None,
                            note=f"{'invoke' if mode == 'sync' else 'ainvoke'}, {saver}, durability={durability}",
                            guarantee=GUARANTEE[durability] if persistence == "sqlite" else persistence,
                        )
                    )
    return found
