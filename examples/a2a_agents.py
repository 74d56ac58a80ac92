"""Two agents over A2A: a researcher served as an A2A server, and an assistant that calls it as a tool.

The researcher's sessions run in a SessionHost; a2a_app serves them (agent
card, SendMessage, tasks read from the log). The assistant's tool is
remote_agent: the remote task's id is logged before the call waits for it, so
a crash resumes by polling that task, never by asking again. Runs offline
(scripted models).

Output includes: assistant: The researcher says: tides follow the moon.
"""

import socket
import tempfile

import anyio
import uvicorn

from effects import SqliteStore, open_session
from effects.protocols import SessionHost, a2a_app, remote_agent
from effects.testing import ScriptedModel, call_tools, say


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        researcher_log = SqliteStore(f"{directory}/researcher.db")
        assistant_log = SqliteStore(f"{directory}/assistant.db")
        sock = socket.create_server(("127.0.0.1", 0))  # loopback only
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"

        researcher = ScriptedModel([say("tides follow the moon.")])
        async with SessionHost(researcher_log, researcher) as host, anyio.create_task_group() as group:
            app = a2a_app(host, url=url, name="researcher", description="Answers research questions.")
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            group.start_soon(lambda: server.serve(sockets=[sock]))

            async with remote_agent(url, name="researcher", poll_seconds=0.05) as tool:
                model = ScriptedModel([call_tools(("researcher", {"message": "What moves the tides?"})), say_result])
                async with open_session(assistant_log, "chat", model, tools=[tool]) as session:
                    session.send("Why are there tides?")
                    state = await session.turn_done()
            print("researcher's sessions:", [info.session_id[:4] + "..." for info in researcher_log.sessions()])
            print("assistant:", state.messages[-1].content)
            server.should_exit = True
        researcher_log.close()
        assistant_log.close()


def say_result(context):
    """The assistant's second step: pass on what the researcher answered."""
    return say(f"The researcher says: {context.entries[-1].content}")


anyio.run(main)
