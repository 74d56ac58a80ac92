"""Every crash the fuzzers found, kept as a regression test: each of these bytes once raised something other
than DecodeError (RecursionError, UnicodeDecodeError, TypeError), was let in and failed later
(OverflowError when stored, a ValueError listing sessions), or reached a provider's caller as a bare error."""

from __future__ import annotations

import msgspec
import pytest

from agent_core import DecodeError, decode_input, decode_log, decode_state
from effects import ModelError
from effects.testing import FakeProviderServer, Reply, openai_stream, sse

from ._bytes import LOG_LINES
from .test_streams import QUESTION

DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
DEEP_MSGPACK = b"\x91" * 100_000 + b"\xc0"
BAD_UTF8 = b'{"type":"user-message-received","timestamp":1,"message_id":"\xff","content":"x"}'
HUGE_INT = b'{"type":"user-message-received","timestamp":1' + b"0" * 30 + b',"message_id":"a","content":"x"}'
INT_KEY_V0 = msgspec.msgpack.encode({1: "x", "type": "session-started", "timestamp": 1})


@pytest.mark.parametrize(
    ("data", "format", "version", "message"),
    [
        (DEEP_JSON, "json", 0, "the data is nested too deeply to be an input"),
        (DEEP_MSGPACK, "msgpack", 0, "the data is nested too deeply to be an input"),
        (BAD_UTF8, "json", 0, "a string is not valid UTF-8"),
        (BAD_UTF8, "json", 1, "a string is not valid UTF-8"),
        (HUGE_INT, "json", 1, "a number is too large (integers must fit in 64 bits)"),
        (HUGE_INT, "json", 0, "a number is too large (integers must fit in 64 bits)"),
        (INT_KEY_V0, "msgpack", 0, "Expected `str` - at `key` in `$`"),
    ],
    ids=["deep-json", "deep-msgpack", "utf8-v0", "utf8-v1", "huge-int-v1", "huge-int-v0", "int-key-v0"],
)
def test_decode_input_found(data: bytes, format: str, version: int, message: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode_input(data, format=format, schema_version=version)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_a_log_with_a_number_beyond_64_bits_names_its_record() -> None:
    huge = LOG_LINES[1].replace(b'"timestamp":', b'"timestamp":1' + b"0" * 30 + b',"x":', 1)
    with pytest.raises(DecodeError) as info:
        decode_log(b"\n".join([LOG_LINES[0], huge]), source="big.jsonl")
    assert str(info.value) == "big.jsonl: record 2: a number is too large (integers must fit in 64 bits)"


@pytest.mark.parametrize(
    ("scale", "looks"),
    [(1_000_000, " (it looks like nanoseconds)"), (1_000, " (it looks like microseconds)"), (-1, "")],
)
def test_a_log_with_timestamps_that_are_not_milliseconds_is_refused(scale: int, looks: str) -> None:
    lines = [msgspec.json.decode(line) for line in LOG_LINES]
    for line in lines:
        line["timestamp"] *= scale
    with pytest.raises(DecodeError) as info:
        decode_log(b"\n".join(msgspec.json.encode(line) for line in lines), source="ns.jsonl")
    at = lines[0]["timestamp"]
    assert str(info.value) == (
        f"ns.jsonl: record 1: timestamp {at} is not a time between 1970 and 9999 in milliseconds since the "
        f"epoch{looks}; expected integer milliseconds, as every input carries"
    )
    assert info.value.path == "$.timestamp"


@pytest.mark.parametrize(
    "data", [DEEP_JSON, b'{"format": 2, "session_id": "\xff"}', b'{"format": 2, "step": 1' + b"0" * 30 + b"}"]
)
def test_decode_state_found(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_state(data)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_openai_stream_line_nested_too_deeply_is_a_malformed_stream() -> None:
    from effects.providers import OpenAIModel

    events = openai_stream(["Hi"])
    with FakeProviderServer() as server:
        server.enqueue(Reply.stream([*events[:1], sse("[" * 5000 + "]" * 5000), *events[1:]]))
        async with OpenAIModel("m", base_url=server.url + "/v1", api_key="sk-found") as model:
            with pytest.raises(ModelError) as info:
                await model.complete(QUESTION, lambda _: None)
    assert "sent a malformed stream: a line is nested too deeply to be a chunk" in str(info.value)
