"""A process that runs (or resumes) a two-round tool loop with thinking against a strict fake, and may kill itself.

Run by ``test_provider_crash.py``: ``python _provider_child.py PROVIDER URL DB [kill]``. PROVIDER is
``anthropic`` or ``responses``; URL the strict fake's. With ``kill`` the process dies with SIGKILL as soon as
the first round's tool result is durable in the SQLite log at DB (between the rounds); without it, it opens
the session from DB (asking the question if the log has none yet) and runs the turn to its end.
"""

from __future__ import annotations

import os
import signal
import sys

import anyio

from effects import Model, SqliteStore, StateUpdated, open_session, tool
from effects.providers import AnthropicModel, OpenAIResponsesModel

SESSION = "crash"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def model(provider: str, url: str) -> Model:
    if provider == "anthropic":
        return AnthropicModel("claude-test", base_url=url, api_key="sk-test", thinking={"type": "adaptive"})
    return OpenAIResponsesModel("gpt-test", base_url=url + "/v1", api_key="sk-test")


def die_between_rounds(event: object) -> None:
    """What a power cut or an OOM kill does, once the first round's result is in the log: no cleanup, no flush."""
    if isinstance(event, StateUpdated) and any(r.status == "completed" for r in event.state.tool_calls.values()):
        os.kill(os.getpid(), signal.SIGKILL)


async def main(provider: str, url: str, db: str, kill: bool) -> None:
    store = SqliteStore(db)
    async with model(provider, url) as adapter, open_session(store, SESSION, adapter, tools=[add]) as session:  # type: ignore[attr-defined]
        if kill:
            session.subscribe(die_between_rounds)
        if not session.state.messages:
            session.send("What is 2 + 3 + 1 + 1?")
        await session.turn_done()


if __name__ == "__main__":
    provider, url, db, *rest = sys.argv[1:]
    anyio.run(main, provider, url, db, rest == ["kill"])
