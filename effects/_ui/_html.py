"""``write_html``: the viewer of one session as a single self-contained file (no server, no network)."""

from __future__ import annotations

import json
import os
from typing import Any

from .._store import EventStore
from ._assets import asset
from ._verify import verify_view
from ._view import session_view


def render_html(store: EventStore, session_id: str) -> str:
    """The page with its style, script and every record's state, diff and model context inlined."""
    data: dict[str, Any] = {
        "view": session_view(store, session_id, details=True),
        "verify": verify_view(store, session_id),
    }
    embedded = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    page = asset("index.html")
    page = page.replace('<link rel="stylesheet" href="/assets/app.css">', f"<style>\n{asset('app.css')}</style>")
    script = f"<script>window.AGENT_CORE_EMBED = {embedded};</script>\n<script>\n{asset('app.js')}</script>"
    return page.replace('<script src="/assets/app.js"></script>', script)


def write_html(store: EventStore, session_id: str, path: str | os.PathLike[str]) -> int:
    """Write :func:`render_html` to ``path``; returns the number of bytes written."""
    data = render_html(store, session_id).encode()
    with open(path, "wb") as out:
        out.write(data)
    return len(data)
