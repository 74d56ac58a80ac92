"""The reducer benchmark's whole-log measurements: replaying a JSON-lines log against a raw decode of its bytes,
and the memory a long session takes against its raw content."""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Any

import msgspec
from _common import measure_each
from _session import INPUTS_PER_TURN, fold, session, turns_for_messages

from agent_core import AgentState, ToolSuccess, decode_log, encode_log, initial_state, replay


def replay_vs_decode(inputs: int, repeat: int) -> dict[str, Any]:
    """decode_log + replay against raw decode_lines of the same JSON-lines bytes."""
    data = encode_log(session(max(1, (inputs - 1) // INPUTS_PER_TURN)))
    count = data.count(b"\n")
    raw_decoder = msgspec.json.Decoder()
    decoded = decode_log(data)
    timings = measure_each(
        {
            "raw_decode_lines": lambda: raw_decoder.decode_lines(data),
            "decode_log": lambda: decode_log(data),
            "replay_only": lambda: replay(decoded),
            "decode_log_and_replay": lambda: replay(decode_log(data)),
        },
        count,
        repeat=repeat,
    )
    return {
        "inputs": count,
        "bytes": len(data),
        **timings,
        "ratio": timings["raw_decode_lines"].median_ns / timings["decode_log_and_replay"].median_ns,
    }


def content_bytes(state: AgentState) -> int:
    """UTF-8 bytes of the session's message contents, tool-call parameters and results."""
    total = sum(len(m.content.encode()) for m in state.messages)
    for record in state.tool_calls.values():
        result = record.result
        text = "" if result is None else result.content if isinstance(result, ToolSuccess) else result.error
        total += len(record.parameters.encode()) + len(text.encode())
    return total


def memory(messages: int) -> dict[str, Any]:
    """Peak and retained traced memory while folding a generated session of ``messages`` messages."""
    turns = turns_for_messages(messages)
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    state = fold(initial_state(), session(turns))  # inputs are generated lazily, so only the state stays
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    content = content_bytes(state)
    return {
        "messages": len(state.messages),
        "tool_calls": len(state.tool_calls),
        "content_bytes": content,
        "peak_bytes": peak,
        "retained_bytes": retained,
        "ratio": peak / content,
        "retained_ratio": retained / content,
        "overhead_per_item_bytes": (retained - content) / (len(state.messages) + len(state.tool_calls)),
        "seconds_traced": time.perf_counter() - start,
    }
