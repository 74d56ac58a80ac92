"""Text cut to fit: the one place long values are shortened for people and for error messages."""

from __future__ import annotations


def clip(text: str, width: int, *, marker: str = "…", one_line: bool = True) -> str:
    """``text`` at most ``width`` characters, ending in ``marker`` when it was cut.

    ``one_line`` folds every run of white space (newlines too) into one space first.
    """
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - len(marker), 0)] + marker
