"""A long session under a compaction policy: 2,000 scripted turns, each reading a large tool result, under a
32k-token context window. Prints the summarization calls (count, tokens), the largest context sent, the wall
time, and the same session without a policy (the message window alone), then writes
``benchmarks/results/compaction.json``.

Run: ``python benchmarks/compaction.py [--turns N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from _common import RESULTS

from agent_core import AgentConfig, CompactionPolicy, LlmContext, context_tokens
from effects import Agent, ModelReply, tool
from effects.testing import ScriptedModel, call_tools, say

WINDOW = 32_000
RESULT_CHARS = 12_000  # about 3,000 tokens a tool result


@tool
def fetch(n: int) -> str:
    """A large document."""
    return f"document {n}: " + ("x" * 9 + " ") * (RESULT_CHARS // 10)


class Counting:
    """The scripted model's script: one tool call then an answer per turn; summaries when asked for."""

    def __init__(self) -> None:
        self.summaries = 0
        self.largest = 0
        self.answers = 0

    def __call__(self, context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            self.summaries += 1
            return say(f"summary {self.summaries}: the user asked for documents; each was read and answered.")
        self.largest = max(self.largest, context_tokens(context))
        last = context.entries[-1] if context.entries else None
        self.answers += 1
        if type(last).__name__ == "ContextMessage" and getattr(last, "role", "") == "user":
            return call_tools(("fetch", {"n": self.answers}))
        return say("Read it.")


async def run(turns: int, policy: CompactionPolicy | None) -> dict[str, Any]:
    script = Counting()
    model = ScriptedModel(script, keep_calls=False)
    config = AgentConfig(max_turn_ms=None, compaction=policy, initial_context_window=10)
    agent = Agent(model, tools=[fetch], config=config)
    started = time.perf_counter()
    async with agent.running() as session:
        for turn in range(turns):
            session.send(f"Please read document {turn}.")
            state = await session.turn_done()
            assert state.last_outcome is not None and state.last_outcome.kind == "completed", state.last_outcome
    elapsed = time.perf_counter() - started
    compaction = state.compaction
    return {
        "policy": "summarize" if policy else "none (window of 10 messages)",
        "turns": turns,
        "seconds": round(elapsed, 2),
        "summarization_calls": script.summaries,
        "summary_input_tokens": compaction.summary_input_tokens if compaction else 0,
        "summary_output_tokens": compaction.summary_output_tokens if compaction else 0,
        "largest_context_tokens": script.largest,
        "window_tokens": WINDOW,
        "messages_kept": len(state.messages),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2_000)
    turns = parser.parse_args().turns
    policy = CompactionPolicy(context_window_tokens=WINDOW, trigger_percent=80, keep_recent_percent=25)
    rows = [asyncio.run(run(turns, policy)), asyncio.run(run(turns, None))]
    header = ("policy", "turns", "seconds", "summarization_calls", "summary_input_tokens", "largest_context_tokens")
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row[name]) for name in header))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compaction.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
