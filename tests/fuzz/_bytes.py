"""Byte strategies for the fuzz tests: raw bytes, valid encodings damaged by random edits, odd JSON values.

Mutating valid data reaches deep into a decoder (a raw random byte string
rarely gets past the first character); the pathological shapes (deep nesting,
numbers beyond 64 bits, bytes that are not UTF-8, absurd timestamps) are drawn
on purpose, as they are what crashed decoders before.

``AGENT_CORE_FUZZ_EXAMPLES`` sets the examples per target (default 60: a
few seconds for the whole folder); e.g. ``AGENT_CORE_FUZZ_EXAMPLES=20000`` for
a long run before a release.
"""

from __future__ import annotations

import json
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

T = TypeVar("T")
EXAMPLES = int(os.environ.get("AGENT_CORE_FUZZ_EXAMPLES", "60"))

fuzz = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
"""The settings of every fuzz target."""

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOG_LINES = [line for line in (FIXTURES / "golden-v1.jsonl").read_bytes().splitlines() if line.strip()]
ORIGIN_LINES = [line for line in (FIXTURES / "origin-v0.jsonl").read_bytes().splitlines() if line.strip()]
CORPUS = LOG_LINES + ORIGIN_LINES + [msgspec.msgpack.encode(msgspec.json.decode(line)) for line in LOG_LINES]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

_ODD = [
    b"[" * 50_000 + b"]" * 50_000,
    b"\x91" * 50_000 + b"\xc0",
    b'"\xff\xfe"',
    b"1" + b"0" * 30,
    b"-1" + b"0" * 30,
    b"1e400",
    b"1767225600000000000",
    b"NaN",
    b"\x00",
    b"\r",
    b"\r\n",
    b"12345678901234567890",
]


@st.composite
def mutated(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """A corpus entry with a few random edits: flips, insertions (odd values among them), cuts, repeats."""
    data = bytearray(draw(st.sampled_from(corpus)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["flip", "insert", "odd", "cut", "truncate", "repeat"]))
        if edit == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif edit == "odd":
            data[at:at] = draw(st.sampled_from(_ODD))
        elif edit == "cut":
            del data[at : at + draw(st.integers(1, 16))]
        elif edit == "truncate":
            del data[at:]
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 32))]
    return bytes(data)


@st.composite
def retyped(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """A valid JSON record with one field's value replaced by an arbitrary JSON value (or an odd one)."""
    record = json.loads(draw(st.sampled_from([line for line in corpus if line.startswith(b"{")])))
    if record:
        key = draw(st.sampled_from(sorted(record)))
        record[key] = draw(json_values)
    text = json.dumps(record).encode()
    if draw(st.booleans()):
        return text
    return text.replace(b"1", draw(st.sampled_from(_ODD)), 1)


def hostile(corpus: list[bytes] = CORPUS) -> st.SearchStrategy[bytes]:
    """Bytes a decoder must survive: mostly damaged valid data, some raw bytes and odd values."""
    return st.one_of(
        mutated(corpus),
        retyped(corpus),
        st.binary(max_size=200),
        st.sampled_from(_ODD),
        json_values.map(lambda v: json.dumps(v).encode()),
    )


@st.composite
def hostile_log(draw: st.DrawFn) -> bytes:
    """A JSON-lines log: the golden log's lines (or the origin log's) with some lines made hostile."""
    original = draw(st.sampled_from([LOG_LINES, ORIGIN_LINES]))
    lines = list(original)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = draw(hostile(original))
    if draw(st.booleans()):
        lines = lines[: draw(st.integers(1, len(lines)))]
    return b"\n".join(lines) + b"\n"


def run_now(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits (a fold over a list, a tool that returns at once) without the cost
    of an event loop per example."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        result: T = stop.value
        return result
    coroutine.close()
    raise AssertionError("the coroutine waited for something; expected it to run straight through")
