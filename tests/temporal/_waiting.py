"""A tool that runs until it is cancelled, and says when it began and when its cancellation reached it."""

from __future__ import annotations

import asyncio
from typing import Any

from effects import Tool, tool


class Waiting:
    """``tool`` (named ``wait_forever``) never returns on its own; ``began`` is set once it runs, ``cancelled``
    once a cancellation reached it."""

    def __init__(self) -> None:
        self.began, self.cancelled = asyncio.Event(), asyncio.Event()

        @tool
        async def wait_forever() -> str:
            """Never returns on its own."""
            self.began.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            return "unreachable"

        self.tool: Tool[..., Any] = wait_forever
