"""The page's files, shipped inside the package: the viewer never loads anything from elsewhere."""

from __future__ import annotations

from importlib import resources

ASSETS = ("index.html", "app.js", "app.css")
_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


def asset(name: str) -> str:
    """The text of one of the page's files."""
    return resources.files("effects._ui").joinpath("assets", name).read_text(encoding="utf-8")


def media_type(name: str) -> str:
    """The Content-Type of one of the page's files."""
    return _TYPES[name.rsplit(".", 1)[1]]
