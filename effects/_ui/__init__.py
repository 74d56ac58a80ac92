"""The session viewer: a small ASGI app over a store, and the same page as one self-contained file.

Import the public names from ``effects``.
"""

from ._app import create_app
from ._decide import DecisionRefused, decide
from ._html import HTML_RECORDS, MAX_HTML_RECORDS, html_window, render_html, write_html
from ._records import record_view
from ._verify import verify_view
from ._view import session_view

__all__ = [
    "HTML_RECORDS",
    "MAX_HTML_RECORDS",
    "DecisionRefused",
    "create_app",
    "decide",
    "html_window",
    "record_view",
    "render_html",
    "session_view",
    "verify_view",
    "write_html",
]
