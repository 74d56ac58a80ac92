"""What a gzip bomb costs a model call: 254 KB of gzip inflating to one 256 MB line of an event stream.

Each adapter, in a child process of its own, makes one call to a scripted
server on a loopback port that answers with the bomb
(``content-encoding: gzip``). The child reports how the call ended, how long
it took, and its peak RSS beyond what it held after a first, ordinary call
(the SDK imported, a connection open). The row ``... (no bounds)`` makes the
same call with every :class:`~effects.providers.StreamLimits` bound set past
the bomb's size, as the adapters read before the bounds existed (``--unbounded``;
it takes minutes). Run: ``python benchmarks/stream_bounds.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib

from _common import table, write_results

LINE_MB = 256

_CHILD = """
import asyncio, json, resource, sys, time
from agent_core import SessionStarted, UserMessageReceived, llm_context, replay
from effects.providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel, StreamLimits
from effects.testing import FakeProviderServer, Reply, anthropic_reply, openai_reply, responses_reply

provider, bounded, bomb = sys.argv[1], sys.argv[2] == "bounded", open(sys.argv[3], "rb").read()
build = {"openai": OpenAIModel, "anthropic": AnthropicModel, "responses": OpenAIResponsesModel}[provider]
reply = {"openai": openai_reply, "anthropic": anthropic_reply, "responses": responses_reply}[provider]
path = "" if provider == "anthropic" else "/v1"
huge = 1 << 40
limits = StreamLimits() if bounded else StreamLimits(event_bytes=huge, event_lines=huge, body_bytes=huge, answer_chars=huge)

CONTEXT = llm_context(replay([SessionStarted(timestamp=1, session_id='s'), UserMessageReceived(timestamp=2, message_id='u', content='Hi?')]))

async def main():
    with FakeProviderServer() as server:
        server.enqueue(reply(["warm"]), Reply.stream([bomb], headers={"content-encoding": "gzip"}))
        async with build("m", base_url=server.url + path, api_key="sk-bench-0123456789", stream_limits=limits) as model:
            await model.complete(CONTEXT, lambda _: None)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            start = time.perf_counter()
            try:
                await model.complete(CONTEXT, lambda _: None)
                outcome = "completed"
            except Exception as error:
                outcome = f"{type(error).__name__}: {str(error).split(' sent ', 1)[-1][:90]}"
            took = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome, "seconds": took, "growth_mb": (after - before) / 1024, "base_mb": before / 1024}))

asyncio.run(main())
"""


def bomb() -> bytes:
    """``data: xxx...`` of 256 MB with no line end, as one gzip member."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"x" * (1 << 20)
    parts = [squeeze.compress(b"data: ")] + [squeeze.compress(block) for _ in range(LINE_MB)]
    return b"".join(parts) + squeeze.flush()


def main() -> None:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unbounded", action="store_true", help="also the OpenAI adapter without bounds")
    parser.add_argument("--only-unbounded", action="store_true", help="only the OpenAI adapter without bounds")
    args = parser.parse_args()
    rows = []
    with tempfile.NamedTemporaryFile(suffix=".gz") as file:
        data = bomb()
        file.write(data)
        file.flush()
        cases = [] if args.only_unbounded else [("openai", True), ("anthropic", True), ("responses", True)]
        cases += [("openai", False)] if args.unbounded or args.only_unbounded else []
        for provider, bounded in cases:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, provider, "bounded" if bounded else "unbounded", file.name],
                capture_output=True,
                text=True,
                check=True,
            )
            row = {"provider": provider if bounded else f"{provider} (no bounds)", **json.loads(done.stdout)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(f"a gzip body of {len(data):,} bytes inflating to one line of {LINE_MB} MB")
    print(
        table(
            ("adapter", "outcome", "s", "peak RSS growth MB", "RSS before MB"),
            [
                (r["provider"], r["outcome"], f"{r['seconds']:.2f}", f"{r['growth_mb']:.0f}", f"{r['base_mb']:.0f}")
                for r in rows
            ],
        )
    )
    print(f"results: {write_results('stream_bounds', {'rows': rows, 'compressed_bytes': len(data)})}")


if __name__ == "__main__":
    main()
