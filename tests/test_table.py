"""``Table``, the persistent mapping of tool-call records and of message positions, behaves as a Python mapping.

A dict is the model: after random writes (new keys and old ones), every
version ever made reads as the dict did at that point. Starting sizes put the
older entries in one or several runs, so lookups, overwrites and counting go
through every part of the table.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st
from immutables import Map

from agent_core import Table

KEYS = st.integers(0, 6_000).map(lambda n: f"k{n}")
PAIRS = st.lists(st.tuples(KEYS, st.integers()), max_size=8)
WRITES = st.lists(st.tuples(st.sampled_from(("set", "update")), PAIRS), max_size=60)  # "set": each pair in turn
SIZES = st.sampled_from((0, 1, 1_023, 1_024, 1_025, 3_000, 5_000))


def grown(size: int) -> tuple[Table[str, int], dict[str, int]]:
    """A table written one key at a time (so its older entries sit in runs), and the dict it should equal."""
    table, model = _grown(size)
    return table, dict(model)


@functools.cache
def _grown(size: int) -> tuple[Table[str, int], dict[str, int]]:
    table: Table[str, int] = Table()
    model: dict[str, int] = {}
    for n in range(size):
        key = f"k{n * 7 % 5_000}"  # some keys written twice
        table = table.set(key, n)
        model[key] = n
    return table, model


@given(SIZES, WRITES, st.lists(KEYS, max_size=20))
def test_every_version_reads_as_the_dict_did_at_that_point(
    size: int, writes: list[tuple[str, list[tuple[str, int]]]], probes: list[str]
) -> None:
    table, model = grown(size)
    versions = [(table, dict(model))]
    for op, pairs in writes:
        if op == "set":
            for key, value in pairs:
                table = table.set(key, value)
        else:
            table = table.update(pairs)
        model.update(pairs)
        versions.append((table, dict(model)))
    assert table == Map(model) and set(table) == set(model) and sorted(table.values()) == sorted(model.values())
    for version, expected in versions:
        assert len(version) == len(expected)
        assert dict(version.items()) == expected and version == expected and expected == version
        for key in [*probes, *(key for _, pairs in writes for key, _ in pairs)]:
            assert (key in version) == (key in expected)
            assert version.get(key) == expected.get(key) and version.get(key, -1) == expected.get(key, -1)
            if key in expected:
                assert version[key] == expected[key]
            else:
                with pytest.raises(KeyError):
                    version[key]


@given(SIZES, st.lists(st.tuples(KEYS, st.integers()), max_size=30))
def test_equality_and_hash_follow_the_items_whatever_the_history(size: int, pairs: list[tuple[str, int]]) -> None:
    table, model = grown(size)
    for key, value in pairs:
        table = table.set(key, value)
        model[key] = value
    rebuilt = Table(model)
    assert table == rebuilt and rebuilt == table and hash(table) == hash(rebuilt) == hash(Map(model))
    assert table == Map(model) and Map(model) == table
    assert Table(table) == table and Table(model.items()) == table
    if model:
        key = next(iter(model))
        assert table.set(key, model[key] + 1) != table and table != {**model, key: model[key] + 1}


def test_a_table_is_a_mapping_with_a_readable_repr() -> None:
    table = Table({"a": 1}).set("b", 2).update({"c": 3})
    assert isinstance(table, Mapping)
    assert repr(Table({"a": 1})) == "Table({'a': 1})" and sorted(table.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert table != [("a", 1)] and table != "abc"
    with pytest.raises(KeyError, match="'z'"):
        table["z"]
    assert table.update({}) is table and Table() == {} and not Table()


def test_many_writes_keep_every_version_and_an_exact_count() -> None:
    table: Table[str, int] = Table()
    model: dict[str, int] = {}
    checkpoints = []
    for n in range(12_000):
        key = f"k{n * 31 % 7_000}"
        table = table.set(key, n)
        model[key] = n
        if n % 2_999 == 0:
            checkpoints.append((table, dict(model)))
    assert len(table) == len(model) == 7_000
    for version, expected in checkpoints:
        assert len(version) == len(expected) and version == expected
        assert all(version[key] == value and version.get(key) == value for key, value in expected.items())
    assert pickle.loads(pickle.dumps(table)) == table
