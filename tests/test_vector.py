"""``Vector``, the persistent sequence of messages and tool-call ids, behaves as a Python sequence."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core import Vector

OPS = st.lists(st.tuples(st.sampled_from(("append", "set")), st.integers(-2_000, 2_000)), max_size=300)


@given(st.lists(st.integers(), max_size=100), OPS)
def test_a_vector_matches_a_list_under_appends_and_sets(start: list[int], ops: list[tuple[str, int]]) -> None:
    vector, model = Vector(start), list(start)
    for op, value in ops:
        before, copy = vector, list(model)
        if op == "append" or not model:
            vector = vector.append(value)
            model.append(value)
        else:
            index = value % len(model) - (len(model) if value < 0 else 0)
            vector = vector.set(index, value)
            model[index] = value
        assert list(before) == copy  # persistent: the old vector is unchanged
    assert list(vector) == model and len(vector) == len(model)
    assert vector == tuple(model) and vector == model and tuple(model) == vector
    if model:
        assert vector[-1] == model[-1] and vector[0] == model[0]
        assert list(reversed(vector)) == model[::-1]
    assert vector[1:-1:2] == model[1:-1:2] and isinstance(vector[1:], Vector)


def test_a_vector_is_a_sequence_with_a_readable_repr_and_clear_errors() -> None:
    vector = Vector(["a", "b"]).append("c")
    assert isinstance(vector, Sequence)
    assert repr(vector) == "Vector(['a', 'b', 'c'])"
    assert vector.index("b") == 1 and "c" in vector and vector.count("a") == 1
    assert hash(vector) == hash(("a", "b", "c"))
    assert vector != ("a", "b") and vector != "abc"
    with pytest.raises(IndexError):
        vector[3]
    with pytest.raises(IndexError):
        vector.set(-4, "x")
