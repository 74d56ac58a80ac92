"""``write_html``: the viewer of a window of a session's records as one self-contained file (no server, no network).

The file holds at most :data:`MAX_HTML_RECORDS` records (by default the
newest :data:`HTML_RECORDS`), each with its state, diff, model context and
input, and their data takes at most :data:`HTML_DATA_BYTES`: each record gets
an equal share of what is left, at most :data:`HTML_RECORD_BYTES`, so the
page stays small whatever the session holds. It is written as it is folded,
record by record, so memory stays that of one state, however long the
session.

The data sits in a ``<script type="application/json">`` element, which the
page parses (it is never run). Inside it every ``<``, ``>`` and ``&``, U+2028
and U+2029 is written as a JSON ``\\u`` escape, so no text of the session can
end the element or change how the HTML parser reads it (``</script>``,
``<!--<script>``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import msgspec

from .._store import EventStore
from ._assets import asset
from ._bounds import clip
from ._cursor import Cursor, Folded
from ._records import detail_of
from ._verify import verify_view
from ._view import summary

HTML_RECORDS = 1000
"""Records a page holds unless told which: the newest ones."""

MAX_HTML_RECORDS = 5000
"""The most records one page holds."""

HTML_DATA_BYTES = 32 * 1024 * 1024
"""The most bytes the records' data takes in a page (the page's script and style add about 20 KiB)."""

HTML_RECORD_BYTES = 256 * 1024
"""The most bytes one record's data (its entry, conversation, lanes and detail) takes in a page."""

DATA_ID = "agent-core-data"
_SCRIPT = '<script src="/assets/app.js"></script>'
_STYLE = '<link rel="stylesheet" href="/assets/app.css">'
_ESCAPES = [
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
]
_encode = msgspec.json.Encoder()


def embedded(value: Any) -> bytes:
    """``value`` as JSON safe inside a ``<script>`` element: no ``<``, ``>``, ``&``, U+2028 or U+2029 left.

    JSON has these only inside strings, where the ``\\u`` escape means the same character.
    """
    data = _encode.encode(value)
    for raw, escaped in _ESCAPES:
        data = data.replace(raw, escaped)
    return data


def html_window(length: int, start: int | None, stop: int | None) -> tuple[int, int]:
    """The records ``start..stop`` a page holds (``ValueError`` saying why not): by default the newest."""
    last = length if stop is None else stop
    first = max(1, last - HTML_RECORDS + 1) if start is None else start
    if not 0 <= last <= length:
        raise ValueError(f"the session has records 1 to {length}; got the last record {last}")
    if not 1 <= first <= last + 1:
        raise ValueError(f"the first record must be from 1 to {last}; got {first}")
    if last - first + 1 > MAX_HTML_RECORDS:
        raise ValueError(
            f"a page holds at most {MAX_HTML_RECORDS} records; records {first} to {last} are {last - first + 1} "
            f"(choose fewer: from {last - MAX_HTML_RECORDS + 1} to {last}, or write several pages)"
        )
    return first, last


def stream_html(
    store: EventStore, session_id: str, write: Callable[[bytes], object], *, start: int | None = None,
    stop: int | None = None,
) -> tuple[int, int]:  # fmt: skip
    """Write the page of records ``start..stop`` (default: the newest :data:`HTML_RECORDS`) in pieces to
    ``write``; returns the first and last record it holds."""
    info = store.session(session_id)
    first, last = html_window(info.length, start, stop)
    page = asset("index.html").replace(_STYLE, f"<style>\n{asset('app.css')}</style>")
    head, tail = page.split(_SCRIPT)
    write(head.encode())
    write(f'<script type="application/json" id="{DATA_ID}">'.encode())
    where = {"from": first, "to": last, "length": info.length}
    write(b'{"session":' + embedded(msgspec.to_builtins(info)) + b',"window":' + embedded(where))
    write(b',"records":[')
    cursor = Cursor.at(store, session_id, first - 1)
    left = HTML_DATA_BYTES
    count = last - first + 1

    def take(folded: Folded) -> bool:
        nonlocal left, count
        detail = detail_of(folded.seq, folded.input, folded.before, folded.after)
        share = min(HTML_RECORD_BYTES, left // count)
        value = {**folded.part, "detail": detail}
        data = embedded(clip(value, share))
        if len(data) > share:  # escapes take up to 6 bytes a character
            data = embedded(clip(value, share // 6))
        write(data if folded.seq == first else b"," + data)
        left, count = left - len(data), count - 1
        return True

    cursor.advance(store, last, take)
    verify = verify_view(store, session_id)
    write(b'],"end":' + embedded(summary(cursor)) + b',"verify":' + embedded(verify) + b"}</script>\n")
    write(f"<script>\n{asset('app.js')}</script>".encode() + tail.encode())
    return first, last


def render_html(store: EventStore, session_id: str, *, start: int | None = None, stop: int | None = None) -> str:
    """The page of records ``start..stop`` (default: the newest :data:`HTML_RECORDS`) as a string: its style,
    script and every record's state, diff and model context inlined."""
    pieces: list[bytes] = []
    stream_html(store, session_id, pieces.append, start=start, stop=stop)
    return b"".join(pieces).decode()


def write_html(
    store: EventStore, session_id: str, path: str | os.PathLike[str], *, start: int | None = None,
    stop: int | None = None,
) -> int:  # fmt: skip
    """Write the page of records ``start..stop`` (default: the newest :data:`HTML_RECORDS`) to ``path`` as it
    is made; returns the number of bytes written. A page that cannot be finished is removed."""
    written = 0
    with open(path, "wb") as out:

        def write(data: bytes) -> None:
            nonlocal written
            out.write(data)
            written += len(data)

        try:
            stream_html(store, session_id, write, start=start, stop=stop)
        except BaseException:
            out.close()
            os.unlink(path)  # no half page left behind
            raise
    return written
