"""Fuzzing the decoders: any bytes give a value or a DecodeError, never another exception; what decodes can
be encoded again (so stores and state hashes never fail later on what a decoder let in)."""

from __future__ import annotations

from typing import Literal

from hypothesis import given
from hypothesis import strategies as st

from agent_core import DecodeError, decode_input, decode_log, decode_state, encode_input, encode_state, state_hash

from ._bytes import FIXTURES, fuzz, hostile, hostile_log

_STATE = (FIXTURES / "golden-v1.jsonl").read_bytes()


@fuzz
@given(hostile(), st.sampled_from(["json", "msgpack"]), st.sampled_from([0, 1]))
def test_decode_input_raises_only_decode_error(data: bytes, format: Literal["json", "msgpack"], version: int) -> None:
    try:
        inp = decode_input(data, format=format, schema_version=version)
    except DecodeError:
        return
    encode_input(inp, format="msgpack")


@fuzz
@given(hostile_log())
def test_decode_log_raises_only_decode_error(data: bytes) -> None:
    try:
        inputs = decode_log(data, source="fuzz.jsonl")
    except DecodeError as error:
        assert str(error).startswith("fuzz.jsonl: ")
        return
    for inp in inputs:
        encode_input(inp, format="msgpack")


def _states() -> list[bytes]:
    from agent_core import replay

    state = replay(decode_log(_STATE))
    return [encode_state(state), encode_state(state, format="msgpack")]


@fuzz
@given(st.data(), st.sampled_from(["json", "msgpack"]))
def test_decode_state_raises_only_decode_error(data: st.DataObject, format: Literal["json", "msgpack"]) -> None:
    raw = data.draw(hostile(_states()))
    try:
        state = decode_state(raw, format=format)
    except DecodeError:
        return
    state_hash(state)
