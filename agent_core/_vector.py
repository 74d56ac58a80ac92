"""``Vector``: the persistent sequence the state keeps its messages and its tool-call order in.

A thin typed shell over pyrsistent's ``pvector`` (a 32-way trie with a tail,
as Clojure's vectors, written in C): appending copies the tail and, once per
32 appends, one path of the trie; replacing an item copies one path. Every
other node is shared with the previous vector, so the writes of a long session
touch a few recently used nodes and a transition costs the same at 100 and at
100,000 messages, even with cold caches. The shell adds what the design's
contract asks of a sequence and pvector lacks: ``==`` with a tuple of the same
items, slices that stay vectors, and a ``Sequence[T]`` type for mypy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

from pyrsistent import PVector, pvector

T = TypeVar("T")


class Vector(Sequence[T]):
    """An immutable sequence: ``len``, iteration in order, negative indexes, slices, ``==`` with any
    sequence of equal items (a tuple, a list), a readable ``repr``; :meth:`append` and :meth:`set`
    return new vectors that share all but one path with this one."""

    __slots__ = ("_items",)

    _items: PVector[T]

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items = pvector(items)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Vector[T]: ...
    def __getitem__(self, index: int | slice) -> T | Vector[T]:
        if isinstance(index, slice):
            return _wrap(self._items[index])
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __reversed__(self) -> Iterator[T]:
        items = self._items
        return (items[i] for i in range(len(items) - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Vector):
            return self._items == other._items
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == len(self._items) and all(a == b for a, b in zip(self._items, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self._items))  # equal to a tuple of the same items, so hashed as one

    def __repr__(self) -> str:
        return f"Vector({list(self._items)!r})"

    def append(self, item: T) -> Vector[T]:
        """A new vector with ``item`` at the end."""
        return _wrap(self._items.append(item))

    def extend(self, items: Iterable[T]) -> Vector[T]:
        """A new vector with ``items`` appended in order."""
        return _wrap(self._items.extend(items))

    def set(self, index: int, item: T) -> Vector[T]:
        """A new vector with ``item`` at ``index`` (negative counts from the end)."""
        return _wrap(self._items.set(index, item))


def _wrap(items: PVector[Any]) -> Vector[Any]:
    vector: Vector[Any] = object.__new__(Vector)
    vector._items = items
    return vector
