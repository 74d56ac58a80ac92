"""An MCP server (the official SDK's ``MCPServer``, 2026-07-28) whose calls suspend: a question, a task.

* ``book(flight)`` asks which seat (an elicitation, returned as ``input_required``) and books it with the answer.
* ``report(topic)`` hands the call to a task (the tasks extension): ``tasks/get`` says ``working`` until the
  file ``RELEASE`` (the first argument) exists, then ``completed``. Every ``tools/call`` of ``report`` is
  appended to the file ``CALLS`` (the second argument), so a test can count them.

Over stdio; with ``--http`` over streamable HTTP on a free loopback port, whose URL it prints first.
"""

from __future__ import annotations

import datetime
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Elicit, Extension, MCPServer, MethodBinding, Resolve, require_client_extension
from mcp_types import CallToolRequestParams, RequestParams
from pydantic import BaseModel

TASKS = "io.modelcontextprotocol/tasks"
RELEASE, CALLS = Path(sys.argv[1]), Path(sys.argv[2])


class Seat(BaseModel):
    seat: str


def which_seat(flight: str) -> Elicit[Seat]:
    return Elicit(f"Window or aisle on {flight}?", Seat)


class TaskParams(RequestParams):
    task_id: str


class Tasks(Extension):
    """The tasks extension's server side, for ``report``: tasks in memory, done once ``RELEASE`` exists."""

    identifier = TASKS

    def __init__(self) -> None:
        self.tasks: dict[str, str] = {}

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get)]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name != "report":
            return await call_next(ctx)
        require_client_extension(ctx, TASKS)
        with CALLS.open("a") as calls:
            calls.write(f"{(params.arguments or {}).get('topic')}\n")
        task_id = f"task-{len(self.tasks) + 1}"
        self.tasks[task_id] = str((params.arguments or {}).get("topic"))
        return {"resultType": "task", **self._task(task_id, "working")}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        topic = self.tasks.get(params.task_id)
        if topic is None:
            return {
                "resultType": "complete",
                **self._task(params.task_id, "failed"),
                "error": {"code": -32602, "message": "no such task"},
            }
        if not RELEASE.exists():
            return {"resultType": "complete", **self._task(params.task_id, "working")}
        result = {"content": [{"type": "text", "text": f"the report on {topic}"}], "isError": False}
        return {"resultType": "complete", **self._task(params.task_id, "completed"), "result": result}

    @staticmethod
    def _task(task_id: str, status: str) -> dict[str, Any]:
        now = datetime.datetime.now(datetime.UTC).isoformat()
        return {
            "taskId": task_id,
            "status": status,
            "createdAt": now,
            "lastUpdatedAt": now,
            "ttlMs": None,
            "pollIntervalMs": 20,
        }


server = MCPServer("suspending", extensions=[Tasks()])


@server.tool(description="Book a seat on a flight (asks which seat).")
def book(flight: str, seat: Annotated[Seat, Resolve(which_seat)]) -> str:
    return f"booked {flight}, {seat.seat} seat"


@server.tool(description="Write a report on a topic (a long task).")
def report(topic: str) -> str:
    raise AssertionError("report is answered by the tasks extension")


def serve_http() -> None:
    import uvicorn

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    print(f"http://127.0.0.1:{listening.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        server.run()
