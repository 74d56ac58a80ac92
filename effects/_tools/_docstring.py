"""Read a tool's description and its parameters' descriptions from a docstring.

Google style (``Args:`` with ``name (type): text`` lines) and Sphinx style
(``:param name: text``) are understood. The description is the text before
the first section; sections the model does not need (``Returns:``,
``Raises:``...) are left out.
"""

from __future__ import annotations

import inspect
import re

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|See Also):\s*$")
_PARAM_SECTIONS = frozenset({"Args", "Arguments", "Parameters", "Params"})
_GOOGLE_PARAM = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_SPHINX_OTHER = re.compile(r"^:(returns?|rtype|raises?|type)\b")


class _Reader:
    """Walks the lines once, remembering the section and the parameter being described."""

    def __init__(self) -> None:
        self.description: list[str] = []
        self.params: dict[str, str] = {}
        self.section = ""
        self.current = ""
        self.entry_indent = -1

    def feed(self, line: str) -> None:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if header := _SECTION.match(stripped):
            self.section, self.current, self.entry_indent = header.group(1), "", -1
        elif sphinx := _SPHINX_PARAM.match(stripped):
            self.section, self.current = "sphinx", sphinx.group(1)
            self.params[self.current] = sphinx.group(2).strip()
        elif _SPHINX_OTHER.match(stripped):
            self.section, self.current = "sphinx-other", ""
        elif not self.section:
            self.description.append(line)
        elif self.section in _PARAM_SECTIONS and stripped and self._is_entry(indent, stripped):
            match = _GOOGLE_PARAM.match(stripped)
            assert match is not None
            self.current = match.group(1)
            self.params[self.current] = match.group(2).strip()
        elif self.current and stripped:
            # A continuation line of the parameter being described.
            self.params[self.current] = f"{self.params[self.current]} {stripped}".strip()

    def _is_entry(self, indent: int, stripped: str) -> bool:
        # Entries share the indent of the section's first entry; deeper lines continue an entry.
        if self.entry_indent < 0 and _GOOGLE_PARAM.match(stripped):
            self.entry_indent = indent
        return indent == self.entry_indent and _GOOGLE_PARAM.match(stripped) is not None


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a docstring; empty when there is none."""
    reader = _Reader()
    for line in inspect.cleandoc(doc or "").splitlines():
        reader.feed(line)
    return "\n".join(reader.description).strip(), reader.params
