"""How much the viewer sends at once, and :func:`clip`, which cuts a JSON value down to a byte budget.

Sessions grow without limit (100,000 inputs and more; a tool result of
megabytes; a turn of thousands of calls), so nothing the viewer sends is the
whole of anything: records come in pages, the state at a record is cut to fit,
sessions are listed in pages. A cut says what it left out
(``… 1,234 more characters``), so a person knows something is missing;
``agent-core show`` and ``export`` print a session whole.
"""

from __future__ import annotations

from typing import Any

import msgspec

RECORDS_PER_PAGE = 200
"""The most records one page of a session holds (``?limit=`` asks for fewer)."""

PAGE_BYTES = 1024 * 1024
"""A page of records ends with the record that takes its records past this many bytes of JSON."""

RECORD_BYTES = 64 * 1024
"""One record's part of a page (its timeline entry, its conversation entries, the lanes it ended) is cut to this."""

SUMMARY_BYTES = 256 * 1024
"""The state a page ends in (approvals waiting, lanes still open) is cut to this."""

DETAIL_BYTES = 256 * 1024
"""The state, diff, model context and input shown for one record, unless ``?bytes=`` asks for more."""

MIN_DETAIL_BYTES, MAX_DETAIL_BYTES = 16 * 1024, 4 * 1024 * 1024
"""The least and the most ``?bytes=`` may ask for one record's detail."""

SESSIONS_PER_PAGE = 100
"""The most sessions one page of the session list holds; it also ends once past :data:`PAGE_BYTES`."""

TREE_SESSIONS = 200
"""The most sessions below its root the tree of a session lists; the rest are counted (``left_off``)."""

MAX_DEPTH = 32
"""Arrays and objects nested deeper than this are replaced by a note (the viewer's own values never are)."""

_SMALLEST_TEXT, _SMALLEST_ITEMS = 32, 2
_KEPT_KEYS = 16  # an object keeps at least this many keys: the viewer's own objects keep their shape
_encode = msgspec.json.Encoder()


def size(value: Any) -> int:
    """The bytes of ``value`` as JSON."""
    return len(_encode.encode(value))


def clip(value: Any, budget: int) -> Any:
    """``value`` (JSON-ready: dicts, lists, strings, numbers) cut so that its JSON takes at most about ``budget``
    bytes: long strings (and keys) shortened, long lists and objects cut, each cut noted in place.

    Strings are cut to a quarter of the budget first, lists and objects to one item per 256 bytes of it; both
    halve until the value fits (an object keeps at least 16 keys, so the viewer's own objects keep their shape).
    A value that does not fit even cut to 32 characters and 2 items per list is replaced by a note.
    """
    value = _cut(value, budget, budget // 2 + 1, 0)  # what is longer than the budget cannot fit anyway
    whole = size(value)
    if whole <= budget:
        return value
    text, items = max(budget // 4, _SMALLEST_TEXT), max(budget // 256, _SMALLEST_ITEMS)
    while True:
        cut = _cut(value, text, items, 0)
        if size(cut) <= budget:
            return cut
        if text == _SMALLEST_TEXT and items == _SMALLEST_ITEMS:
            return f"… {whole:,} bytes or more, too large to show here"
        text, items = max(text // 2, _SMALLEST_TEXT), max(items // 2, _SMALLEST_ITEMS)


def _cut(value: Any, text: int, items: int, depth: int) -> Any:
    if isinstance(value, str):
        return _text(value, text)
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_DEPTH:
        return f"… nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, dict):
        keys = max(items, _KEPT_KEYS)
        kept: dict[str, Any] = {}
        for number, (key, item) in enumerate(list(value.items())[:keys]):
            short = _text(key, text) if isinstance(key, str) else key
            kept[short if short not in kept else f"{short} (key {number + 1})"] = _cut(item, text, items, depth + 1)
        if len(value) > keys:
            kept["…"] = f"{len(value) - keys:,} more entries"
        return kept
    if isinstance(value, (list, tuple)):
        kept_items = [_cut(item, text, items, depth + 1) for item in value[:items]]
        if len(value) > items:
            kept_items.append(f"… {len(value) - items:,} more items")
        return kept_items
    return value


def _text(value: str, text: int) -> str:
    return value if len(value) <= text else f"{value[:text]}… {len(value) - text:,} more characters"
