"""``Table``: a persistent mapping for what grows with a session by id (tool-call records, message positions).

The state keeps such a mapping as an ``immutables.Map`` up to 4,096 entries
and as a ``Table`` past them (:func:`grown`). In a table, the newest writes
sit in a small ``immutables.Map``; older entries in a few dicts that are
never changed once built (runs), oldest and largest first. When the small map
reaches 1,024 entries it becomes a run, and a run is merged into the one
before it while that one is no larger, as a binary counter carries: an entry
is copied about log2(n / 1,024) times in its life (in C, a dict merge), a
lookup asks the small map, then the runs, newest first (at most about
log2(n / 1,024) + 1 dict lookups), and a write touches only the small map.
A key in no run (a new id, checked before it is added) would be looked up in
every run, each lookup in a large dict a few cache misses: a bitmap of the
runs' keys (a Bloom filter: one bit a key, from its hash; 8 to 32 bits a
key, copied with each new run) answers most such lookups with one.

The point is the cycle collector. A hash trie such as ``immutables.Map`` is
made of nodes the collector tracks; a write copies a path of them at a random
place (the key's hash), and the copies stay young, each referring to up to 32
older nodes, until a collection walks them. In a long session those older
nodes are out of the processor's caches: at 100,000 messages a stream of new
turns spent more time in young collections walking the state's two maps than
in the transitions themselves. A dict whose keys and values the collector does
not track (strings, numbers, the state's ``gc=False`` Structs) is never
tracked itself, so the runs cost the collector nothing, and the small map's
nodes refer to recent, cache-warm entries.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from itertools import chain
from typing import Any, TypeVar, overload

from immutables import Map

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")

_RECENT = 1_024  # entries the small map holds before it becomes a run
_SMALL = 4_096  # entries up to which the state keeps a plain immutables.Map (see grown)
_new = object.__new__
_NO_RECENT: Map[Any, Any] = Map()


class Table(Mapping[K, V]):
    """An immutable mapping: lookups, ``in``, ``len``, iteration (in no particular order, as a hash
    map's), ``==`` with any mapping of equal items, a readable ``repr``; :meth:`set` and
    :meth:`update` return new tables that share all but a small map of recent writes with this one.
    Iterating, comparing and hashing build a dict of every entry: O(n); so does ``len`` the first time a
    table is asked (writes do not count entries)."""

    # ``_recent`` holds the newest value of each key written since the last flush; ``_runs`` the
    # older values, a key's newest one in the newest run holding it; ``_seen`` the bitmap of the
    # runs' keys (a key whose bit is clear is in no run); ``_count`` the distinct keys, or -1
    # until ``len`` is first asked: counting on each write would look every new key up in the
    # runs, and writes outnumber the times anyone asks a table its length.
    __slots__ = ("_count", "_recent", "_runs", "_seen")

    _count: int
    _recent: Map[K, V]
    _runs: tuple[dict[K, V], ...]
    _seen: bytes

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        run = items._merged() if isinstance(items, Table) else dict(items)
        runs = (run,) if run else ()
        self._count, self._recent, self._runs, self._seen = len(run), _NO_RECENT, runs, _marked(b"", run, runs)

    def __len__(self) -> int:
        if self._count < 0:
            self._count = len(self._merged())  # O(n), once for each table asked
        return self._count

    # Lookups test membership, then subscript: ``Map.get`` parses its arguments slowly (about
    # three times a subscript), and a KeyError raised and caught costs a dozen lookups.

    def __getitem__(self, key: K) -> V:
        recent = self._recent
        if key in recent:
            return recent[key]
        for run in reversed(self._runs):
            if key in run:
                return run[key]
        raise KeyError(key)

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | D, /) -> V | D: ...
    def get(self, key: K, default: Any = None, /) -> Any:
        """The value of ``key``, or ``default`` when it has none."""
        recent = self._recent
        if key in recent:
            return recent[key]
        for run in reversed(self._runs):
            if key in run:
                return run[key]
        return default

    def __contains__(self, key: object) -> bool:
        if key in self._recent:
            return True
        seen = self._seen
        if seen:
            bit = hash(key) & (len(seen) * 8 - 1)
            if not seen[bit >> 3] >> (bit & 7) & 1:
                return False
        for run in self._runs:  # noqa: SIM110 - a loop: any() over a generator doubles the cost of a miss
            if key in run:
                return True
        return False

    def __iter__(self) -> Iterator[K]:
        return iter(self._merged())

    def keys(self) -> KeysView[K]:
        """The keys (of a dict built for the purpose: O(n))."""
        return self._merged().keys()

    def values(self) -> ValuesView[V]:
        """The values (of a dict built for the purpose: O(n))."""
        return self._merged().values()

    def items(self) -> ItemsView[K, V]:
        """The ``(key, value)`` pairs (of a dict built for the purpose: O(n))."""
        return self._merged().items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Table):
            return self._merged() == other._merged()
        if not isinstance(other, Mapping):
            return NotImplemented
        return self._merged() == dict(other.items())

    def __hash__(self) -> int:
        return hash(Map(self._merged()))  # as a Map of the same items, which compares equal

    def __repr__(self) -> str:
        return f"Table({self._merged()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Table, (self._merged(),))

    def set(self, key: K, value: V) -> Table[K, V]:
        """A new table with ``key`` mapped to ``value``."""
        recent = self._recent.set(key, value)
        if len(recent) >= _RECENT:
            return self._flushed(recent)
        table: Table[K, V] = _new(Table)
        table._count = -1
        table._recent = recent
        table._runs = self._runs
        table._seen = self._seen
        return table

    def update(self, items: Mapping[K, V] | Iterable[tuple[K, V]]) -> Table[K, V]:
        """A new table with every ``(key, value)`` of ``items`` set (the last value of a key repeated in them)."""
        added = items if type(items) is dict else dict(items)
        if not added:
            return self
        recent = self._recent.update(added)
        if len(recent) >= _RECENT:
            return self._flushed(recent)
        table: Table[K, V] = _new(Table)
        table._count, table._recent, table._runs, table._seen = -1, recent, self._runs, self._seen
        return table

    def _flushed(self, recent: Map[K, V]) -> Table[K, V]:
        """A table with this one's runs and ``recent`` as a new run (carried into the older ones)."""
        run = dict(recent.items())
        runs = _carry((*self._runs, run))
        table: Table[K, V] = _new(Table)
        table._count, table._recent, table._runs, table._seen = -1, _NO_RECENT, runs, _marked(self._seen, run, runs)
        return table

    def _merged(self) -> dict[K, V]:
        """Every entry in one new dict: the runs, oldest first, then the recent writes."""
        merged: dict[K, V] = {}
        for run in self._runs:
            merged.update(run)
        merged.update(self._recent.items())
        return merged


def grown(mapping: Map[K, V] | Table[K, V]) -> Map[K, V] | Table[K, V]:
    """``mapping`` as the state keeps it: an ``immutables.Map`` up to 4,096 entries, a :class:`Table` past them.

    A small map is the faster of the two (its methods are C, a table's Python),
    and it costs the collector little: its nodes fit in the processor's caches.
    The reducer calls this where it adds entries.
    """
    if type(mapping) is Map and len(mapping) > _SMALL:
        return Table(mapping)
    return mapping


def keyed(items: dict[K, V]) -> Map[K, V] | Table[K, V]:
    """``items`` as the state keeps them (see :func:`grown`)."""
    return Table(items) if len(items) > _SMALL else Map(items)


def _marked(seen: bytes, run: dict[Any, Any], runs: tuple[dict[Any, Any], ...]) -> bytes:
    """``seen`` with the bits of ``run``'s keys set; sized anew, every key of ``runs`` marked, under 8 bits a key."""
    entries = sum(map(len, runs))
    if len(seen) >= entries:
        bits, keys = bytearray(seen), iter(run)
    else:  # 16 to 32 bits a key (8 at the least): 3 to 12 keys in 100 in no run find their bit set
        bits, keys = bytearray(1 << (2 * entries - 1).bit_length() if entries else 0), chain.from_iterable(runs)
    mask = len(bits) * 8 - 1
    for key in keys:
        bit = hash(key) & mask
        bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


def _carry(runs: tuple[dict[Any, Any], ...]) -> tuple[dict[Any, Any], ...]:
    """``runs`` with the newest merged into the one before it while that one is no larger, as a binary counter."""
    while len(runs) > 1 and len(runs[-2]) <= len(runs[-1]):
        runs = (*runs[:-2], {**runs[-2], **runs[-1]})
    return runs
