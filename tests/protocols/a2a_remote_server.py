"""A remote agent served by the official ``a2a-sdk`` (its ``DefaultRequestHandler`` and an ``AgentExecutor``).

* ``research <topic>``: a long task: working until the file ``RELEASE`` (the first argument) exists, then
  completed with a report as its artifact.
* ``paint``: asks which colour (``input-required``); the answer (a text or data part) completes it.
* anything else is answered at once.

Every message it receives is appended to the file ``MESSAGES`` (the second argument). It prints its URL once
it listens on a free loopback port.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import uvicorn
from a2a.helpers.proto_helpers import get_data_parts, get_message_text, new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, Role
from starlette.applications import Starlette

RELEASE, MESSAGES = Path(sys.argv[1]), Path(sys.argv[2])


class Researcher(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        text = get_message_text(message)
        with MESSAGES.open("a") as log:
            log.write(f"{text or get_data_parts(message.parts)}\n")
        task = context.current_task
        continuing = task is not None
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if continuing and task.history and get_message_text(task.history[0]) == "paint":
            colour = text or str(get_data_parts(message.parts))
            await updater.add_artifact([Part(text=f"painted it {colour}")], name="result")
            await updater.complete()
        elif text == "paint":
            question = new_text_message(
                "Which colour?", context_id=task.context_id, task_id=task.id, role=Role.ROLE_AGENT
            )
            await updater.requires_input(question)
        elif text.startswith("research "):
            await updater.start_work()
            while not RELEASE.exists():
                await asyncio.sleep(0.02)
            await updater.add_artifact([Part(text=f"a report on {text.removeprefix('research ')}")], name="report")
            await updater.complete()
        else:
            await updater.add_artifact([Part(text=f"you said {text}")], name="echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def main() -> None:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    card = AgentCard(
        name="researcher",
        description="Researches topics, paints things.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="research", name="research", description="Research a topic.", tags=["research"])],
    )
    handler = DefaultRequestHandler(Researcher(), InMemoryTaskStore(), card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    print(url, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])


if __name__ == "__main__":
    main()
