"""Stuck detection on canonical arguments: spellings of one call count as one, cycles of calls are caught."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import agent_core as ac

from ._build import T0, ask, asked, fold, in_turn, ok, rejected, result_of, started

# --- the canonical form ---------------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    """JSON equality written without the function under test: numbers by exact value, booleans never numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return Decimal(repr(a) if isinstance(a, float) else a) == Decimal(repr(b) if isinstance(b, float) else b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@st.composite
def respelled(draw: st.DrawFn, value: Any) -> str:
    """``value`` written another way: keys shuffled, spacing, integers as ``1.0`` or ``1e0``, ``-0.0`` for 0,
    escapes for characters."""

    def write(v: Any) -> str:
        space = draw(st.sampled_from(("", " ", "\n  ")))
        if isinstance(v, dict):
            keys = draw(st.permutations(list(v)))
            inner = f",{space}".join(
                f"{json.dumps(k, ensure_ascii=draw(st.booleans()))}:{space}{write(v[k])}" for k in keys
            )
            return "{" + space + inner + space + "}"
        if isinstance(v, list):
            return "[" + f",{space}".join(write(x) for x in v) + "]"
        if isinstance(v, bool) or v is None:
            return json.dumps(v)
        if isinstance(v, int):
            return draw(st.sampled_from((str(v), f"{v}.0", f"{v * 10}e-1", f"{v}e0" if v else "-0.0")))
        if isinstance(v, float):
            return draw(
                st.sampled_from((repr(v), repr(v) + "0" if "e" not in repr(v) else repr(v), f"{Decimal(repr(v))}"))
            )
        return json.dumps(v, ensure_ascii=draw(st.booleans()))

    return write(value)


@given(json_values.flatmap(lambda v: st.tuples(st.just(v), respelled(v), respelled(v))))
def test_every_spelling_of_one_value_has_one_canonical_form(drawn: tuple[Any, str, str]) -> None:
    value, one, other = drawn
    assert ac.canonical_arguments(one) == ac.canonical_arguments(other) == ac.canonical_arguments(json.dumps(value))


@given(json_values, json_values)
def test_different_values_never_share_a_canonical_form(a: Any, b: Any) -> None:
    same = ac.canonical_arguments(json.dumps(a)) == ac.canonical_arguments(json.dumps(b))
    assert same == _same(a, b)


@given(json_values)
def test_the_canonical_form_is_json_of_the_same_value_and_a_fixed_point(value: Any) -> None:
    canonical = ac.canonical_arguments(json.dumps(value))
    assert _same(json.loads(canonical), value)
    assert ac.canonical_arguments(canonical) == canonical


def test_numbers_compare_by_exact_value() -> None:
    canon = ac.canonical_arguments
    assert canon('{"n": 1}') == canon('{"n":1.0}') == canon('{"n":1e0}') == canon('{"n":10E-1}') == '{"n":1}'
    assert canon("[-0.0, 0, 0e5]") == "[0,0,0]"
    assert canon("[true, 1, false, 0]") == "[true,1,false,0]"
    assert canon("0.1") != canon("0.10000000000000001")
    assert canon(str(2**70)) == canon(f"{2**70}.000") == str(2**70)
    assert canon("1e400") == canon("10e399") == canon("1" + "0" * 400) == "1" + "0" * 400
    assert canon("1e5000") == canon("10e4999") == "1E+5000"  # past 4,300 digits, written with an exponent
    assert canon("[1e999999999]") == "[1E+999999999]"  # a huge exponent costs nothing


def test_text_that_is_not_json_is_compared_as_written() -> None:
    for text in ("{", "NaN", '{"n": Infinity}', "[" * 10_000 + "]" * 10_000, ""):
        assert ac.canonical_arguments(text) == text


# --- stuck detection in the reducer ---------------------------------------------------------------------------


def test_the_same_call_spelled_differently_is_the_same_call() -> None:
    state = in_turn(max_identical_tool_calls=2)
    state = fold(state, ask(at=T0 + 2, t1='search:{"q": "a", "n": 1}'), ok("t1", at=T0 + 3))
    state = fold(state, ask(at=T0 + 4, t2='search:{"n":1.0,"q":"a"}'))

    detail = (
        'tool \'search\' was asked 2 times in this turn with the same parameters {"n":1,"q":"a"}; the agent looks stuck'
    )
    assert state.last_outcome == ac.TurnOutcome(kind="failed", reason="stuck", detail=detail, turn=1, at=T0 + 4)


def _cycle(state: ac.AgentState, *specs: str, at: int) -> ac.AgentState:
    for n, spec in enumerate(specs, start=1):
        state = fold(state, asked({f"t{n}": spec}, at=at))
        if state.turn is None:
            return state
        state = fold(state, ok(f"t{n}", at=at + 1))
        at += 2
    return state


def test_two_calls_taking_turns_are_caught_at_the_fourth_and_the_verdict_names_them() -> None:
    state = _cycle(in_turn(), 'search:{"q":"a"}', "fetch", 'search:{ "q" : "a" }', "fetch:{}", at=T0 + 2)

    detail = (
        'the tool calls t1 (search {"q":"a"}), t2 (fetch {}), t3 (search {"q":"a"}), t4 (fetch {}) go round a '
        "cycle of the same 2 calls twice in this turn; the agent looks stuck"
    )
    assert state.last_outcome == ac.TurnOutcome(kind="failed", reason="stuck", detail=detail, turn=1, at=T0 + 8)
    assert result_of(state, "t4") == ac.ToolFailure(error=f"not run: {detail}")


def test_a_cycle_of_three_is_caught_within_the_window_and_not_beyond_it() -> None:
    calls = ('search:{"q":"a"}', "fetch", 'search:{"q":"b"}') * 2
    caught = _cycle(in_turn(), *calls, at=T0 + 2)
    assert caught.last_outcome is not None and caught.last_outcome.reason == "stuck"
    assert "cycle of the same 3 calls" in caught.last_outcome.detail

    narrow = _cycle(in_turn(stuck_window=5), *calls, at=T0 + 2)
    assert narrow.turn is not None  # a cycle of 3 twice needs a window of 6


def test_a_cycle_inside_one_batch_is_caught() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="search:{}", t2="fetch", t3="search:{}", t4="fetch"))
    assert state.last_outcome is not None and state.last_outcome.reason == "stuck"


def test_progress_is_not_a_cycle() -> None:
    state = _cycle(in_turn(), 'search:{"q":"a"}', "fetch", 'search:{"q":"b"}', "fetch", at=T0 + 2)
    assert state.turn is not None and state.turn.tool_call_ids == ("t1", "t2", "t3", "t4")


def test_window_zero_turns_the_cycle_rule_off() -> None:
    state = _cycle(in_turn(stuck_window=0), "search:{}", "fetch", "search:{}", "fetch", at=T0 + 2)
    assert state.turn is not None  # caught with the default window


def test_a_window_that_cannot_hold_a_cycle_is_refused_at_session_start() -> None:
    start = ac.SessionStarted(timestamp=T0, session_id="s", config=ac.AgentConfig(stuck_window=3))
    assert rejected(ac.initial_state(), start).message == (
        "expected stuck_window (0 turns the cycle rule off) from 4 to 100, got 3"
    )
    assert started(stuck_window=100).config.stuck_window == 100
