"""``Vector``: the persistent sequence the state keeps what grows with the session in.

A 32-way trie with a tail, as Clojure's vectors, whose nodes are plain tuples:
the items sit in leaves of 32, each inner node holds up to 32 children, and
the last (up to 32) items sit in the tail. Appending copies the tail and, once
per 32 appends, one path of the trie; replacing an item copies one path. Every
other node is shared with the previous vector.

Tuples are what make the trie cheap to hold for the cycle collector. A
collection untracks each tuple it keeps whose items are all untracked: strings,
numbers, the state's ``gc=False`` Structs, and nodes already untracked (a node
the collection happened to check before its children waits for the next
collection of its generation). A new vector therefore hands the collector its
new path and tail (a few small tuples) and nothing else, while a vector that is
one C object (pyrsistent's ``pvector``, used here before) is walked whole,
every item, by every collection of the youngest generation while it is young:
0.6 ms for 100,000 items, and every transition that appends makes a young one.
A vector of tracked objects (lists, say) works the same; its nodes stay tracked.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, TypeVar, overload

T = TypeVar("T")

_BITS = 5
_WIDTH = 1 << _BITS  # 32 children a node, 32 items a leaf
_MASK = _WIDTH - 1

_new = object.__new__

# Tuples are built by concatenation (``tail + (item,)``, RUF005 waived): it takes about
# half the time of unpacking into a new tuple, on paths every append and replace takes.


class Vector(Sequence[T]):
    """An immutable sequence: ``len``, iteration in order, negative indexes, slices, ``==`` with any
    sequence of equal items (a tuple, a list), a readable ``repr``; :meth:`append` and :meth:`set`
    return new vectors that share all but one path with this one."""

    # ``_root`` is the node at level ``_shift`` (a leaf's items are at level 0); it holds
    # the first ``_count - len(_tail)`` items, a multiple of 32, in full leaves.
    __slots__ = ("_count", "_root", "_shift", "_tail")

    _count: int
    _shift: int
    _root: tuple[Any, ...]
    _tail: tuple[T, ...]

    def __init__(self, items: Iterable[T] = ()) -> None:
        items = tuple(items)
        count = len(items)
        in_tree = (count - 1) & ~_MASK if count else 0
        nodes: list[tuple[Any, ...]] = [items[i : i + _WIDTH] for i in range(0, in_tree, _WIDTH)]
        shift = _BITS
        while len(nodes) > _WIDTH:
            nodes = [tuple(nodes[i : i + _WIDTH]) for i in range(0, len(nodes), _WIDTH)]
            shift += _BITS
        self._count, self._shift, self._root, self._tail = count, shift, tuple(nodes), items[in_tree:]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Vector[T]: ...
    def __getitem__(self, index: int | slice) -> T | Vector[T]:
        count = self._count
        tail = self._tail
        in_tree = count - len(tail)
        if index.__class__ is not int:
            if index.__class__ is slice:
                start, stop, step = index.indices(count)
                if step == 1 and start >= in_tree:  # the newest items, as a context window asks
                    vector: Vector[T] = _new(Vector)
                    vector._tail = items = tail[start - in_tree : stop - in_tree]
                    vector._count = len(items)
                    vector._shift = _BITS
                    vector._root = ()
                    return vector
                return self._slice(start, stop, step)
            index = _position(index)
        if index < 0:
            index += count
        if index >= in_tree:
            if index >= count:
                raise IndexError(f"Vector index out of range: {index} for {count} items")
            return tail[index - in_tree]
        if index < 0:
            raise IndexError(f"Vector index out of range: {index - count} for {count} items")
        node = self._root
        shift = self._shift
        if shift == _BITS:  # up to 1,056 items
            return node[index >> _BITS][index & _MASK]  # type: ignore[no-any-return]
        while shift:
            node = node[(index >> shift) & _MASK]
            shift -= _BITS
        return node[index & _MASK]  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[T]:
        if not self._root:
            return iter(self._tail)
        items: Iterator[Any] = iter(self._root)
        for _ in range(self._shift // _BITS):
            items = chain.from_iterable(items)
        return chain(items, self._tail)

    def __reversed__(self) -> Iterator[T]:
        items: Iterator[Any] = reversed(self._root)
        for _ in range(self._shift // _BITS):
            items = chain.from_iterable(map(reversed, items))
        return chain(reversed(self._tail), items)

    def __contains__(self, value: object) -> bool:
        return value in self.__iter__()  # type: ignore[operator]  # an iterator searched in C, as a tuple is

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Vector):
            # Equal counts give equal shapes, and the tuples compare shared nodes by identity.
            return self._count == other._count and self._tail == other._tail and self._root == other._root
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._count and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))  # equal to a tuple of the same items, so hashed as one

    def __repr__(self) -> str:
        return f"Vector({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Vector, (tuple(self),))

    def append(self, item: T) -> Vector[T]:
        """A new vector with ``item`` at the end."""
        tail = self._tail
        if len(tail) == _WIDTH:
            return self._push(tail, (item,))
        vector: Vector[T] = _new(Vector)
        vector._count = self._count + 1
        vector._shift = self._shift
        vector._root = self._root
        vector._tail = tail + (item,)  # noqa: RUF005
        return vector

    def extend(self, items: Iterable[T]) -> Vector[T]:
        """A new vector with ``items`` appended in order."""
        items = tuple(items)
        if not items:
            return self
        tail = self._tail
        room = _WIDTH - len(tail)
        if len(items) <= room:
            return _vector(self._count + len(items), self._shift, self._root, tail + items)
        vector = self._push(tail + items[:room], ())
        for start in range(room, len(items) - _WIDTH, _WIDTH):
            vector = vector._push(items[start : start + _WIDTH], ())
        start = room + (len(items) - room - 1) // _WIDTH * _WIDTH
        rest = items[start:]
        return _vector(vector._count + len(rest), vector._shift, vector._root, rest)

    def set(self, index: int, item: T) -> Vector[T]:
        """A new vector with ``item`` at ``index`` (negative counts from the end; ``len(self)`` appends)."""
        count = self._count
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            if position == count:
                return self.append(item)
            raise IndexError(f"Vector index out of range: {index} for {count} items")
        tail = self._tail
        in_tree = count - len(tail)
        vector: Vector[T] = _new(Vector)
        vector._count = count
        vector._shift = self._shift
        if position >= in_tree:
            at = position - in_tree
            vector._root = self._root
            vector._tail = tail[:at] + (item,) + tail[at + 1 :]  # noqa: RUF005
        else:
            vector._root = _replace(self._root, self._shift, position, item)
            vector._tail = tail
        return vector

    def _push(self, leaf: tuple[T, ...], tail: tuple[T, ...]) -> Vector[T]:
        """This vector with the full ``leaf`` (its tail, extended) moved into the trie and ``tail`` after it."""
        in_tree = self._count - len(self._tail)
        shift = self._shift
        if in_tree >> _BITS == 1 << shift:  # the root is full: grow a level
            root: tuple[Any, ...] = (self._root, _path(shift, leaf))
            shift += _BITS
        else:
            root = _insert(self._root, shift, in_tree, leaf)
        return _vector(in_tree + _WIDTH + len(tail), shift, root, tail)

    def _slice(self, start: int, stop: int, step: int) -> Vector[T]:
        tail = self._tail
        in_tree = self._count - len(tail)
        if step != 1:
            return _from_tuple(tuple(self[i] for i in range(start, stop, step)))
        if stop <= start:
            return _EMPTY
        if start == 0 and stop == self._count:
            return self
        parts = []
        at = start
        while at < stop and at < in_tree:
            first = at & ~_MASK
            parts.append(self._leaf(at)[at - first : stop - first])
            at = first + _WIDTH
        if stop > in_tree:
            parts.append(tail[: stop - in_tree])
        return _from_tuple(tuple(chain.from_iterable(parts)))

    def _leaf(self, index: int) -> tuple[T, ...]:
        node = self._root
        shift = self._shift
        while shift:
            node = node[(index >> shift) & _MASK]
            shift -= _BITS
        return node


def _position(index: object) -> int:
    try:
        return operator.index(index)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"Vector indices must be integers or slices, not {type(index).__name__}") from None


def _vector(count: int, shift: int, root: tuple[Any, ...], tail: tuple[Any, ...]) -> Vector[Any]:
    vector: Vector[Any] = _new(Vector)
    vector._count, vector._shift, vector._root, vector._tail = count, shift, root, tail
    return vector


def _from_tuple(items: tuple[Any, ...]) -> Vector[Any]:
    if len(items) <= _WIDTH:
        return _vector(len(items), _BITS, (), items)
    return Vector(items)


def _path(shift: int, leaf: tuple[Any, ...]) -> tuple[Any, ...]:
    """A new branch from level ``shift`` down to ``leaf``."""
    node = leaf
    while shift:
        node = (node,)
        shift -= _BITS
    return node


def _insert(node: tuple[Any, ...], shift: int, index: int, leaf: tuple[Any, ...]) -> tuple[Any, ...]:
    """``node`` (at level ``shift``, not full) with ``leaf`` as the leaf holding position ``index``."""
    at = (index >> shift) & _MASK
    if shift == _BITS:
        child = leaf
    elif at < len(node):
        child = _insert(node[at], shift - _BITS, index, leaf)
    else:
        child = _path(shift - _BITS, leaf)
    return node[:at] + (child,)  # noqa: RUF005


def _replace(node: tuple[Any, ...], shift: int, index: int, item: Any) -> tuple[Any, ...]:
    """``node`` (at level ``shift``) with ``item`` at position ``index`` below it."""
    at = (index >> shift) & _MASK
    child = item if not shift else _replace(node[at], shift - _BITS, index, item)
    return node[:at] + (child,) + node[at + 1 :]  # noqa: RUF005


_EMPTY: Vector[Any] = Vector()
