"""Tools served by a Model Context Protocol server (the ``mcp`` extra).

:class:`McpServer` starts the server (a command over stdio, or a streamable
HTTP URL), lists its tools with their JSON schemas and calls them. It is an
async context manager: the server process lives exactly as long as the
``async with`` block, which must be entered and left in the same task.
Whatever goes wrong in a call (a JSON-RPC error, an ``isError`` result, a
server that died) becomes a ``ToolFailure`` the model reads, never an
exception.

It follows the stateless revision (2026-07-28) through the official SDK. A
server's ``input_required`` result suspends the call: the questions are
logged (``tool-call-input-required``) and wait for a person; the call is sent
again with the answers and the server's ``requestState``. With the tasks
extension a server may hand the call to a task: its id is logged
(``tool-call-task-created``) and the call follows it with ``tasks/get``
(``tasks/update`` carries answers to a task's questions); a session resumed
after a crash follows the task again, and never sends the call twice. The
server's tools are offered in the order of their names, whatever order it
lists them in, so the same server always makes the same ``session-started``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import IO, Any

import anyio

from agent_core import ToolDefinition, ToolFailure, ToolResult, ToolSuccess

from .._arguments import arguments_object
from .._text import clip
from .._tools import InputRequired, Resumption, TaskCreated, Tool, ToolOutcome
from ._extras import require

MAX_TOOL_PAGES = 100
"""The most pages of ``tools/list`` read from one server before it is refused (a server paging forever)."""

MAX_TOOLS = 1_000
"""The most tools taken from one server."""


class McpServerError(Exception):
    """An MCP server misbehaved while starting: listing its tools never ended, or listed too many."""


class McpServer:
    """The tools of one MCP server, as :class:`~agent_core.ToolDefinition`\\ s and calls.

    Give ``command`` (argv of a stdio server, e.g. ``[sys.executable, "-m",
    "mcp_server_time"]``) or ``url`` (streamable HTTP). ``prefix`` is put
    before every tool name (to keep two servers' tools apart);
    ``requires_approval`` is ``True`` for all tools or the names that need it;
    ``timeout_ms`` bounds each call. A tool is marked idempotent when the
    server hints it is idempotent or read-only. ``errlog`` receives a stdio
    server's stderr (default: this process's stderr).
    """

    def __init__(
        self,
        command: Sequence[str] = (),
        *,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        prefix: str = "",
        requires_approval: bool | Collection[str] = False,
        timeout_ms: int | None = None,
        errlog: IO[str] | None = None,
        tasks: bool = True,
    ) -> None:
        self._mcp = require("mcp", extra="mcp", user="McpServer")
        from . import _mcp_wire

        self._wire = _mcp_wire
        self._tasks = tasks
        if bool(command) == bool(url):
            raise ValueError(
                f"McpServer needs either a command (argv) or a url, not both or neither; got {command=} {url=}"
            )
        self.label = url or " ".join(command)
        self._command, self._url = tuple(command), url
        self._env, self._cwd, self._errlog = env, cwd, errlog
        self._prefix, self._approval, self._timeout_ms = prefix, requires_approval, timeout_ms
        self._client: Any = None
        self._stack: AsyncExitStack | None = None
        self._names: dict[str, str] = {}  # our name -> the server's name
        self.definitions: tuple[ToolDefinition, ...] = ()

    def __repr__(self) -> str:
        return f"McpServer({self.label!r}, tools={list(self._names)})"

    async def __aenter__(self) -> McpServer:
        try:
            async with AsyncExitStack() as stack:
                client = self._mcp.Client(
                    await self._transport(stack),
                    elicitation_callback=self._wire.refuse_mid_call,
                    extensions=[self._wire.Tasks()] if self._tasks else None,
                )
                self._client = await stack.enter_async_context(client)
                self.definitions = await self._list_tools()
                self._stack = stack.pop_all()
        except BaseExceptionGroup as group:  # the SDK's task group wraps a failure of ours in a group of one
            raise _single(group) from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if self._url is not None:
            from mcp.client.streamable_http import streamable_http_client

            from ._mcp_http import bounded_client

            http = await stack.enter_async_context(bounded_client())
            return streamable_http_client(self._url, http_client=http)
        program, *args = self._command
        params = self._mcp.StdioServerParameters(command=program, args=args, env=self._env, cwd=self._cwd)
        return self._mcp.stdio_client(params, errlog=self._errlog or sys.stderr)

    async def _list_tools(self) -> tuple[ToolDefinition, ...]:
        """Every page of ``tools/list``, at most :data:`MAX_TOOL_PAGES` pages and :data:`MAX_TOOLS` tools."""
        found: list[ToolDefinition] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_TOOL_PAGES):
            page = await self._client.list_tools(cursor=cursor)
            found.extend(self._definition(tool) for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tuple(sorted(found, key=lambda definition: definition.name))
            if cursor in seen:
                raise McpServerError(
                    f"MCP server {self.label!r} listed its tools in a loop: tools/list gave the cursor "
                    f"{clip(cursor, 60)!r} twice; expected each page to lead to a new one and the last to none"
                )
            if len(found) > MAX_TOOLS:
                raise McpServerError(
                    f"MCP server {self.label!r} lists more than {MAX_TOOLS} tools; expected at most {MAX_TOOLS} "
                    "(a model cannot choose among more)"
                )
            seen.add(cursor)
        raise McpServerError(
            f"MCP server {self.label!r} returned a next page of tools {MAX_TOOL_PAGES} times; expected the last "
            "page (no nextCursor) sooner"
        )

    def _definition(self, tool: Any) -> ToolDefinition:
        name = self._prefix + tool.name
        self._names[name] = tool.name
        hints = tool.annotations
        approval = (
            self._approval
            if isinstance(self._approval, bool)
            else tool.name in self._approval or name in self._approval
        )
        return ToolDefinition(
            name=name,
            description=tool.description or tool.title or "",
            parameters=json.dumps(tool.input_schema, separators=(",", ":")),
            requires_approval=approval,
            idempotent=bool(hints is not None and (hints.idempotent_hint or hints.read_only_hint)),
            timeout_ms=self._timeout_ms,
        )

    def tools(self) -> tuple[McpTool, ...]:
        """The server's tools, to pass to an agent next to ``@tool`` functions: ``Agent(model, tools=[*server.tools()])``."""
        return tuple(McpTool(self, definition) for definition in self.definitions)

    async def call(self, name: str, arguments: str, resumption: Resumption | None = None) -> ToolOutcome:
        """Call tool ``name`` (as listed in :attr:`definitions`) with JSON ``arguments``: a result, a question
        for a person (``input_required``), or a task; never an exception. ``resumption`` sends the call again
        with a person's answers, or follows the task it was handed to."""
        if self._client is None:
            return ToolFailure(error=f"MCP server {self.label!r} is not running (use it inside `async with`)")
        remote = self._names.get(name)
        if remote is None:
            listed = ", ".join(self._names) or "none"
            return ToolFailure(error=f"tool {name!r} is not served by MCP server {self.label!r}; its tools: {listed}")
        parsed = arguments_object(arguments)
        if isinstance(parsed, str):
            return ToolFailure(error=f"tool {name!r}: {parsed}; call it again with a JSON object of arguments")
        try:
            if resumption is not None and resumption.task_id:
                return await self._follow(name, resumption)
            return await self._send(name, remote, parsed, resumption)
        except Exception as error:  # JSON-RPC errors and dead servers alike: the model reads what happened
            return ToolFailure(
                error=f"tool {name!r} failed on MCP server {self.label!r}: {error or type(error).__name__}"
            )

    async def _send(
        self, name: str, remote: str, arguments: dict[str, object], resumption: Resumption | None
    ) -> ToolOutcome:
        """``tools/call``, with the answers and state of an earlier ``input_required`` when resuming."""
        responses = None
        state = None
        if resumption is not None and resumption.input_responses:
            answers = self._wire.parsed_responses(resumption.input_responses)
            if isinstance(answers, str):
                return ToolFailure(error=f"tool {name!r} could not be called again with a person's answers: {answers}")
            responses, state = answers, resumption.request_state or None
        for _ in range(MAX_STATE_ONLY_ROUNDS):
            result = await self._client.session.call_tool(
                remote,
                arguments,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
                allow_claimed=True,
            )
            if isinstance(result, self._wire.CreateTaskResult):
                return TaskCreated(task_id=result.task_id)
            if not isinstance(result, self._mcp.types.InputRequiredResult):
                return _result(name, result)
            if result.input_requests:  # a person answers; the call is sent again then
                return InputRequired(
                    requests=self._wire.questions(result.input_requests), request_state=result.request_state or ""
                )
            # No question, only state: the server asks to be called again (with it) shortly.
            responses, state = None, result.request_state
            await anyio.sleep(STATE_ONLY_DELAY)
        return ToolFailure(
            error=f"tool {name!r} on MCP server {self.label!r} asked to be called again {MAX_STATE_ONLY_ROUNDS} "
            "times without a result"
        )

    async def _follow(self, name: str, resumption: Resumption) -> ToolOutcome:
        """Poll the task the call was handed to (sending a person's answers first) until it ends or asks."""
        session, task_id = self._client.session, resumption.task_id
        if resumption.input_responses:
            answers = self._wire.parsed_responses(resumption.input_responses)
            if isinstance(answers, str):
                return ToolFailure(error=f"tool {name!r}: task {task_id!r} could not get a person's answers: {answers}")
            encoded = {k: v.model_dump(mode="json", by_alias=True, exclude_none=True) for k, v in answers.items()}
            await self._wire.update_task(session, task_id, encoded)
        while True:
            task = await self._wire.get_task(session, task_id)
            if task.status == "completed":
                return _result(name, self._mcp.types.CallToolResult.model_validate(task.result or {}))
            if task.status in ("failed", "cancelled"):
                detail = (task.error or {}).get("message") or task.status_message or "no reason given"
                return ToolFailure(error=f"tool {name!r}: task {task_id!r} on MCP server {self.label!r} {task.status}: {detail}")
            if task.status == "input_required" and task.input_requests:
                return InputRequired(requests=self._wire.questions(task.input_requests))
            await anyio.sleep(self._wire.poll_seconds(task.poll_interval_ms))


MAX_STATE_ONLY_ROUNDS = 10
"""How many times a server may ask to be called again without a question (state only) before the call fails."""

STATE_ONLY_DELAY = 0.05
"""Seconds before calling again a server that returned only state."""


def _result(name: str, result: Any) -> ToolResult:
    text = result_text(result)
    if result.is_error:
        return ToolFailure(error=text or f"tool {name!r} reported an error")
    return ToolSuccess(content=text)


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception inside nested groups of one, or the group itself when it holds several."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup) and len(found.exceptions) == 1:
        found = found.exceptions[0]
    return found


def result_text(result: Any) -> str:
    """A ``CallToolResult`` as the text the model reads: text parts joined, other parts as compact JSON."""
    parts: list[str] = []
    for block in result.content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type in ("image", "audio"):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 characters]")
        else:
            parts.append(block.model_dump_json(by_alias=True, exclude_none=True))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, separators=(",", ":")))
    return "\n".join(parts)


class McpTool(Tool[..., Coroutine[Any, Any, ToolResult]]):
    """One tool of an :class:`McpServer`, registered with an agent like a ``@tool`` function.

    Its definition (name, description, JSON schema, approval, timeout) comes
    from the server, so it is built without a Python signature; the server
    validates the arguments. Calling it directly (``await t(timezone="UTC")``)
    returns the ``ToolResult``.
    """

    def __init__(self, server: McpServer, definition: ToolDefinition) -> None:
        # Tool.__init__ derives a schema from a Python signature; here the server gives it.
        self.server = server
        self.name = definition.name
        self.definition = definition
        self.is_async = True

        async def call(**arguments: Any) -> ToolResult:
            return await self.invoke(json.dumps(arguments), "")

        self.fn = call

    def __repr__(self) -> str:
        return f"<McpTool {self.name!r} of {self.server.label!r}>"

    async def invoke(
        self, arguments: str, tool_call_id: str, *, threads: anyio.CapacityLimiter | None = None
    ) -> ToolResult:
        """Run one call on the server: a result, never an exception (cancellation aside); no thread is used.

        A call the server suspends (a question, a task) needs a session to answer or follow it: here it is a
        failure saying so; an agent's sessions use :meth:`attempt`.
        """
        outcome = await self.server.call(self.name, arguments)
        if isinstance(outcome, InputRequired | TaskCreated):
            return ToolFailure(
                error=f"tool {self.name!r} suspended the call ({type(outcome).__name__}); run it in a session"
            )
        return outcome

    async def attempt(
        self,
        arguments: str,
        tool_call_id: str,
        resumption: Resumption | None = None,
        *,
        threads: anyio.CapacityLimiter | None = None,
    ) -> ToolOutcome:
        """One attempt at a call: a result, the server's questions, or the task it handed the call to."""
        return await self.server.call(self.name, arguments, resumption)
