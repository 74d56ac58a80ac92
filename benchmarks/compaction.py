"""A long session under a compaction policy: the context stays under its budget, and what summaries cost.

2,000 scripted turns, each reading a large tool result, under a 32k-token context window. Prints the summarization calls (count, tokens, cost at a fixed price table), the
largest context sent beside the 32k budget, the wall time, and the same session without a policy (the message
window alone), then writes ``benchmarks/results/compaction.json``.

Run: ``python benchmarks/compaction.py [--turns N] [--quick]`` (``--quick``: 800 turns, under a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from decimal import Decimal
from typing import Any

from _common import table, write_results

from agent_core import AgentConfig, CompactionPolicy, ContextCompacted, LlmContext, Usage, context_tokens, format_nanos
from effects import Agent, InputReceived, MachineEvent, ModelReply, tool
from effects.testing import ScriptedModel, call_tools, say

WINDOW = 32_000
RESULT_CHARS = 12_000  # about 3,000 tokens a tool result
INPUT_PRICE, OUTPUT_PRICE = Decimal(3), Decimal(15)  # per million tokens: a mid-range model's list price
QUICK_TURNS = 800


def price(model: str, usage: Usage) -> Decimal:
    """The fixed price table: ``INPUT_PRICE`` and ``OUTPUT_PRICE`` per million tokens."""
    return (INPUT_PRICE * usage.input_tokens + OUTPUT_PRICE * usage.output_tokens) / 1_000_000


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


class SummaryCosts:
    """Subscriber: the cost each ``context-compacted`` input logged."""

    def __init__(self) -> None:
        self.costs: list[int] = []

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, InputReceived) and isinstance(event.input, ContextCompacted):
            self.costs.append(event.input.cost or 0)


async def run(turns: int, policy: CompactionPolicy | None) -> dict[str, Any]:
    script = Counting()
    model = ScriptedModel(script, keep_calls=False)
    config = AgentConfig(max_turn_ms=None, compaction=policy, initial_context_window=10)
    agent = Agent(model, tools=[fetch], config=config, pricing=price)
    summaries = SummaryCosts()
    started = time.perf_counter()
    async with agent.running() as session:
        session.subscribe(summaries)
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
        "summary_cost_nanos": sum(summaries.costs),
        "session_cost_nanos": state.cost,
        "summary_input_tokens": compaction.summary_input_tokens if compaction else 0,
        "summary_output_tokens": compaction.summary_output_tokens if compaction else 0,
        "largest_context_tokens": script.largest,
        "window_tokens": WINDOW,
        "messages_kept": len(state.messages),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2_000)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_TURNS} turns")
    args = parser.parse_args()
    turns = QUICK_TURNS if args.quick else args.turns
    policy = CompactionPolicy(context_window_tokens=WINDOW, trigger_percent=80, keep_recent_percent=25)
    rows = [asyncio.run(run(turns, policy)), asyncio.run(run(turns, None))]
    print(
        f"{turns} turns, a tool result of about {RESULT_CHARS // 4:,} tokens each, a context budget of {WINDOW:,} "
        f"tokens; priced at {INPUT_PRICE} per million input tokens and {OUTPUT_PRICE} per million output tokens\n"
    )
    headers = ("policy", "seconds", "summaries", "summary tokens in/out", "summaries' cost", "session's cost")
    headers += ("largest context", "of budget")
    print(
        table(
            headers,
            [
                (
                    row["policy"],
                    f"{row['seconds']:.2f}",
                    row["summarization_calls"],
                    f"{row['summary_input_tokens']:,}/{row['summary_output_tokens']:,}",
                    format_nanos(row["summary_cost_nanos"]),
                    format_nanos(row["session_cost_nanos"]),
                    f"{row['largest_context_tokens']:,}",
                    f"{100 * row['largest_context_tokens'] / WINDOW:.0f}%",
                )
                for row in rows
            ],
        )
    )
    compacted = rows[0]
    verdict = "under" if compacted["largest_context_tokens"] <= WINDOW else "OVER"
    print(
        f"\nwith the policy, the largest context sent was {compacted['largest_context_tokens']:,} tokens: {verdict} "
        f"the {WINDOW:,}-token budget"
    )
    write_results("compaction", {"mode": "quick" if args.quick else "full", "window_tokens": WINDOW, "rows": rows})


if __name__ == "__main__":
    main()
