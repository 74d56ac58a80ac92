"""Configured secret values never enter a session: every input is redacted where it enters.

``Agent(..., secrets=[...])`` names values (database passwords, tokens) that
must reach no log, export, trace or error message. Everything that enters a
session from outside becomes an input first, so redacting the inputs where
they are dispatched covers every way in at once: the model's text and tool-call
arguments, tool results and failures, model errors, a person's message or
denial reason, the configuration in ``session-started``. A model reply whose
provider item holds a secret is not kept (the call fails, retryable): an
altered item would be refused by its provider. Streamed text is
redacted too, holding back the end of a chunk that may be the start of a
secret split across chunks. The reducer never sees a secret, so nothing
derived from the state (the model's next request, spans, ``inspect``) can show one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from agent_core import TEXT_MARKER, AgentInput, LlmCallFailed, LlmMessageCompleted, ReActObserved

from .._machine import Dispatch
from ._events import TextDelta

REDACTED = "[redacted]"
"""What replaces each occurrence of a configured secret in inputs and streamed text."""

MIN_SECRET_CHARS = 8
"""The shortest secret accepted: a shorter value would redact ordinary words and ids."""


class Redactor:
    """Replaces the configured secrets (longest first) with :data:`REDACTED`. Empty: changes nothing, costs nothing."""

    __slots__ = ("secrets",)

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = set()
        for secret in secrets:
            if not isinstance(secret, str) or len(secret) < MIN_SECRET_CHARS:
                shown = f"a string of {len(secret)} characters" if isinstance(secret, str) else type(secret).__name__
                raise ValueError(
                    f"a secret must be a string of at least {MIN_SECRET_CHARS} characters, got {shown}; "
                    "pass the secret values themselves (e.g. os.environ['DB_PASSWORD']), not their names"
                )
            values.add(secret)
        self.secrets: tuple[str, ...] = tuple(sorted(values, key=lambda s: (-len(s), s)))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced (the same object when it holds none).

        Occurrences that overlap (of one secret or of two) become one marker
        covering them all, so no part of any secret is left beside it.
        """
        spans = self._spans(text)
        if not spans:
            return text
        kept, end = [], 0
        for start, stop in spans:
            kept.append(text[end:start] + REDACTED)
            end = stop
        return "".join(kept) + text[end:]

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """The stretches of ``text`` each marker replaces: occurrences, overlapping ones merged, in order."""
        merged: list[tuple[int, int]] = []
        for start, stop in sorted(self._occurrences(text)):
            if merged and start < merged[-1][1]:  # an overlapping occurrence only widens the current one
                merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
            else:
                merged.append((start, stop))
        return merged

    def cuts(self, text: str, cuts: Iterable[int]) -> list[int]:
        """Where positions ``cuts`` of ``text`` fall in :meth:`text`'s result (a cut inside a secret moves after
        its marker), so parts of a text counted before redaction can be counted after it."""
        spans = self._spans(text)
        moved = []
        for cut in cuts:
            shift = 0
            for start, stop in spans:
                if cut <= start:
                    break
                if cut < stop:
                    cut = stop
                shift += stop - start - len(REDACTED)
            moved.append(cut - shift)
        return moved

    def _occurrences(self, text: str) -> Iterable[tuple[int, int]]:
        for secret in self.secrets:
            start = text.find(secret)
            while start != -1:
                yield start, start + len(secret)
                start = text.find(secret, start + 1)

    def stable_end(self, text: str) -> int:
        """Where ``text`` (a stream so far) can be cut: no secret, complete or still arriving, crosses that point.

        So redacting the part before it now and the rest later gives what redacting the whole gives.
        """
        cut, moved = len(text) - self.held_back(text), True
        while moved:  # a complete occurrence across the cut moves it back to the occurrence's start
            moved = False
            for secret in self.secrets:
                start = text.find(secret, max(0, cut - len(secret) + 1))
                if start != -1 and start < cut:
                    cut, moved = start, True
        return cut

    def input(self, inp: AgentInput) -> AgentInput:
        """``inp`` with every secret in any of its text fields replaced (``inp`` itself when it holds none)."""
        if not self.secrets:
            return inp
        raw = msgspec.to_builtins(inp)
        cleaned = self._walk(raw)
        return inp if cleaned is raw else msgspec.convert(cleaned, type(inp))

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            items = {self.text(k): self._walk(v) for k, v in value.items()}
            same = all(a is b for a, b in zip(items.values(), value.values(), strict=True))
            return value if same and items.keys() == value.keys() else items
        if isinstance(value, list):
            walked = [self._walk(v) for v in value]
            return value if all(a is b for a, b in zip(walked, value, strict=True)) else walked
        return value

    def held_back(self, text: str) -> int:
        """How many characters at the end of ``text`` could begin a secret (to wait for the next chunk)."""
        longest = 0
        for secret in self.secrets:
            for n in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:n]):
                    longest = n
                    break
        return longest


class RedactingDispatch:
    """A :class:`~effects.Dispatch` that redacts an effect's inputs and streamed text before passing them on."""

    __slots__ = ("answered", "inner", "pending", "redactor")

    def __init__(self, inner: Dispatch[AgentInput], redactor: Redactor) -> None:
        self.inner, self.redactor = inner, redactor
        self.pending: dict[str, str] = {}  # message id -> streamed text held back
        self.answered = ("", "")  # the last completed message (id, text before redaction), for the reply's items

    def __call__(self, inp: AgentInput, /) -> None:
        if isinstance(inp, LlmMessageCompleted):
            rest = self.pending.pop(inp.message_id, "")
            if rest:
                self.inner.emit(TextDelta(message_id=inp.message_id, text=self.redactor.text(rest)))
            self.answered = (inp.message_id, inp.content)
        elif isinstance(inp, ReActObserved) and inp.items:
            self.inner(self.redactor.input(self._with_items(inp)))
            return
        self.inner(self.redactor.input(inp))

    def _with_items(self, inp: ReActObserved) -> AgentInput:
        """``inp`` with its text markers counting the redacted text; a failure when a provider item holds a secret.

        A provider refuses an item that was altered, and the log never holds a
        secret, so a reply whose item holds one is not kept: the call fails
        (retryable: the model is asked again).
        """
        for item in inp.items:
            if self.redactor.text(item.data) is not item.data:
                return LlmCallFailed(
                    timestamp=inp.timestamp,
                    error=f"the model's reply carries a {item.kind} item holding a configured secret; its provider "
                    "refuses an altered item and the log never holds a secret, so the reply is not kept. "
                    "Retryable: the model is asked again.",
                    retryable=True,
                )
        message_id, text = self.answered
        markers = [i for i, item in enumerate(inp.items) if item.kind == TEXT_MARKER and item.ref == message_id]
        if not markers or self.redactor.text(text) is text:
            return inp
        ends, end = [], 0
        for position in markers:
            end += inp.items[position].chars
            ends.append(end)
        moved = self.redactor.cuts(text, ends)
        items = list(inp.items)
        for position, start, stop in zip(markers, [0, *moved], moved, strict=False):
            items[position] = msgspec.structs.replace(items[position], chars=stop - start)
        return msgspec.structs.replace(inp, items=tuple(items))

    async def dispatch_committed(self, inp: AgentInput, /) -> bool:
        return await self.inner.dispatch_committed(self.redactor.input(inp))

    def emit(self, event: Any, /) -> None:
        if not isinstance(event, TextDelta):
            self.inner.emit(event)
            return
        raw = self.pending.pop(event.message_id, "") + event.text  # held back unredacted, in memory only
        cut = self.redactor.stable_end(raw)
        if cut < len(raw):
            self.pending[event.message_id] = raw[cut:]
        if cut:
            self.inner.emit(TextDelta(message_id=event.message_id, text=self.redactor.text(raw[:cut])))
