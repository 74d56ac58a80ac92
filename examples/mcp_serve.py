"""Use an agent from an MCP client, as an IDE would: ``agent-core mcp-serve`` over stdio, the SDK's client.

The command offers the agent's sessions as MCP tools (start_session,
send_message, read_answer, approve, answer_questions, cancel_turn); every
session is logged to the store, so ``agent-core show`` and the viewer work on
it. Runs offline (the scripted demo model).

Output includes: status: waiting for approve save_note
"""

import json
import sys
import tempfile

import anyio
from mcp import Client, StdioServerParameters


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        command = ["-m", "effects", "mcp-serve", "--demo", "--db", f"{directory}/agent.db"]
        async with Client(StdioServerParameters(command=sys.executable, args=command)) as client:
            started = await client.call_tool("start_session", {"message": "what is 17 * 23?"})
            reply = json.loads(started.content[0].text)
            print("answer:", reply["answer"])

            asked = await client.call_tool(
                "send_message", {"session_id": reply["session_id"], "message": "remember: milk"}
            )
            waiting = json.loads(asked.content[0].text)
            [pending] = waiting["pending"]
            print("status:", waiting["status"], "for approve", pending["tool"])

            done = await client.call_tool(
                "approve", {"session_id": reply["session_id"], "tool_call_id": pending["tool_call_id"]}
            )
            print("answer:", json.loads(done.content[0].text)["answer"])


anyio.run(main)
