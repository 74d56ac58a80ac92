"""``Vector``, the persistent sequence of messages, tool-call ids and workflow moves, behaves as a Python sequence.

A list is the model: after random appends, extends and replacements, every
version ever made (persistence) reads as the list did at that point, and
slices, comparisons, hashing and errors agree with a tuple's. Starting sizes
reach past one, two and three levels of the trie (1,056, 32,800 items).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core import Vector

OPS = st.lists(st.tuples(st.sampled_from(("append", "set")), st.integers(-2_000, 2_000)), max_size=300)

# Around the sizes where the trie grows: a full tail, a full root of leaves, a second and a third level.
SIZES = st.one_of(
    st.integers(0, 100),
    st.sampled_from((31, 32, 33, 64, 65, 1_023, 1_024, 1_055, 1_056, 1_057, 2_080, 32_799, 32_800, 32_801, 40_000)),
)
OPERATIONS = st.lists(  # ("append", [item]), ("extend", items), ("set", [index])
    st.one_of(
        st.tuples(st.just("append"), st.lists(st.integers(), min_size=1, max_size=1)),
        st.tuples(st.just("extend"), st.lists(st.integers(), max_size=80)),
        st.tuples(st.just("set"), st.lists(st.integers(-50_000, 50_000), min_size=1, max_size=1)),
    ),
    max_size=120,
)
BOUNDS = st.one_of(st.none(), st.integers(-45_000, 45_000))


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


@given(SIZES, OPERATIONS, st.data())
def test_every_version_reads_as_the_list_did_at_that_point(
    size: int, operations: list[tuple[str, list[int]]], data: st.DataObject
) -> None:
    vector, model = Vector(range(size)), list(range(size))
    versions = [(vector, tuple(model))]
    for op, argument in operations:
        if op == "append":
            vector = vector.append(argument[0])
            model.append(argument[0])
        elif op == "extend":
            vector = vector.extend(argument)
            model.extend(argument)
        elif model:
            index = argument[0] % len(model) - (len(model) if argument[0] < 0 else 0)
            vector = vector.set(index, -index)
            model[index] = -index
        versions.append((vector, tuple(model)))
    for version, expected in versions:
        assert len(version) == len(expected)
        assert tuple(version) == expected
        assert tuple(reversed(version)) == expected[::-1]
        assert version == expected and version == list(expected) and expected == version
        assert hash(version) == hash(expected)
    for _ in range(5):
        index = data.draw(st.integers(-len(model) - 2, len(model) + 1), label="index")
        if -len(model) <= index < len(model):
            assert vector[index] == model[index]
        else:
            with pytest.raises(IndexError):
                vector[index]
        if index == len(model):
            assert vector.set(index, 0) == [*model, 0]  # as pvector did: setting one past the end appends
        elif not -len(model) <= index < len(model):
            with pytest.raises(IndexError):
                vector.set(index, 0)


@given(SIZES, BOUNDS, BOUNDS, st.one_of(st.none(), st.integers(-70, 70).filter(bool)))
def test_slices_match_a_tuples_and_stay_vectors(
    size: int, start: int | None, stop: int | None, step: int | None
) -> None:
    vector, model = Vector(range(size)), tuple(range(size))
    part = vector[start:stop:step]
    expected = model[start:stop:step]
    assert isinstance(part, Vector)
    assert tuple(part) == expected and len(part) == len(expected) and part == expected
    # A slice is a vector like any other: it grows, and its own slices and indexes work.
    grown = part.append(-1).extend([-2, -3])
    assert tuple(grown) == (*expected, -1, -2, -3)
    assert grown[len(expected) :] == (-1, -2, -3)
    if expected:
        assert part[-1] == expected[-1] and part[0] == expected[0]


@given(SIZES, st.integers(0, 40_000), st.integers())
def test_equality_and_hash_follow_the_items(size: int, position: int, value: int) -> None:
    items = list(range(size))
    by_appends = Vector[int]()
    for item in items:
        by_appends = by_appends.append(item)
    built = Vector(items)
    assert by_appends == built and built == by_appends and hash(by_appends) == hash(built) == hash(tuple(items))
    assert built == items and built == tuple(items) and built == range(size)
    assert (built != [*items, 0] and built != items[:-1]) or not items
    if items:
        index = position % size
        changed = built.set(index, value)
        assert (changed == built) == (value == items[index])
        assert (changed == items) == (value == items[index])


def test_a_vector_is_a_sequence_with_a_readable_repr_and_clear_errors() -> None:
    vector = Vector(["a", "b"]).append("c")
    assert isinstance(vector, Sequence)
    assert repr(vector) == "Vector(['a', 'b', 'c'])"
    assert vector.index("b") == 1 and "c" in vector and "d" not in vector and vector.count("a") == 1
    assert hash(vector) == hash(("a", "b", "c"))
    assert vector != ("a", "b") and vector != "abc" and vector != b"abc" and vector != {"a", "b", "c"}
    with pytest.raises(IndexError):
        vector[3]
    with pytest.raises(IndexError):
        vector.set(-4, "x")
    with pytest.raises(TypeError, match="Vector indices must be integers or slices, not str"):
        vector["a"]  # type: ignore[call-overload]


def test_a_vector_keeps_its_items_across_pickling_and_shares_what_it_did_not_change() -> None:
    long = Vector(range(5_000))
    assert pickle.loads(pickle.dumps(long)) == long
    assert long.extend([]) is long and long[:] is long
