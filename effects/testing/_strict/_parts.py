"""What the strict fakes share: the parts a scripted reply is made of, their script, and their signatures.

A reply is a sequence of parts streamed in order: text (a ``str``), a
:class:`Thought` (Anthropic: a thinking block, or a redacted one; Responses: a
reasoning item), a :class:`Compacted` (Responses: a compaction item) and tool
calls (:class:`~effects.testing.FakeToolCall`). Whatever a fake signs, it
signs with an HMAC of a key it holds, so it recognises its own items byte for
byte when they come back, and refuses them altered.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Self, TypeAlias

from .._fake_server import FakeProviderServer, RecordedRequest, Reply
from .._fake_streams import FakeToolCall


class Thought(NamedTuple):
    """Thinking to stream: an Anthropic thinking block (``redacted``: a ``redacted_thinking`` block) or a
    Responses reasoning item whose summary is ``text``; signed by the fake."""

    text: str
    redacted: bool = False


class Compacted(NamedTuple):
    """A Responses compaction item standing for everything before it; signed by the fake."""

    summary: str = "the conversation so far, compacted"


Part: TypeAlias = str | Thought | Compacted | FakeToolCall
"""One part of a scripted reply."""

Entry: TypeAlias = Sequence[Part] | Reply
"""One scripted answer: a reply's parts, or a :class:`~effects.testing.Reply` sent as it is (an error, a stream)."""

Script: TypeAlias = Iterable[Entry] | Callable[[Any], Entry]
"""The answers in order, or a function of each request's JSON body giving its answer."""

DEFAULT_KEY = b"agent-core strict fake"


class Signer:
    """Signs and checks tokens: a JSON claim and an HMAC-SHA256 of it under the fake's key."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    def mac(self, *parts: str) -> str:
        message = "\x1f".join(parts).encode()
        return base64.urlsafe_b64encode(hmac.new(self._key, message, hashlib.sha256).digest()).decode().rstrip("=")

    def token(self, claim: dict[str, str]) -> str:
        """An opaque token carrying ``claim``, which only this signer's :meth:`claim` accepts back."""
        body = base64.urlsafe_b64encode(json.dumps(claim, sort_keys=True).encode()).decode().rstrip("=")
        return f"{body}.{self.mac(body)}"

    def claim(self, token: object) -> dict[str, str] | None:
        """The claim of a token this signer made, or ``None`` for anything else (altered, truncated, foreign)."""
        if not isinstance(token, str) or token.count(".") != 1:
            return None
        body, mac = token.split(".")
        if not hmac.compare_digest(mac, self.mac(body)):
            return None
        try:
            claim = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except ValueError:
            return None
        return claim if isinstance(claim, dict) else None


def digest(text: str) -> str:
    """A short digest of a signed text (the claim carries it, so an altered text no longer matches)."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Scripted:
    """The fake's answers: a queue, or a function of the request body; thread-safe."""

    __slots__ = ("_function", "_lock", "_queue")

    def __init__(self, script: Script) -> None:
        self._lock = threading.Lock()
        self._function = script if callable(script) else None
        self._queue: collections.deque[Entry] = collections.deque(() if callable(script) else script)

    def enqueue(self, entries: Iterable[Entry]) -> None:
        with self._lock:
            self._queue.extend(entries)

    def next(self, body: Any) -> Entry | None:
        if self._function is not None:
            return self._function(body)
        with self._lock:
            return self._queue.popleft() if self._queue else None


def tokens(value: object) -> int:
    """A stand-in token count: a quarter of the JSON's characters."""
    return len(json.dumps(value, separators=(",", ":"))) // 4 + 1


def pieces(text: str) -> list[str]:
    """``text`` split in two halves, as a stream would deliver it (one piece when short)."""
    half = len(text) // 2
    return [text[:half], text[half:]] if half else [text]


class Refused(Exception):
    """A check of a request failed: the message of the error to answer with."""


class StrictServer:
    """What both strict fakes share: the loopback server, the script, the signer, the refusals made.

    A fake defines ``_answer(request) -> Reply``; its class says what it checks.
    """

    def __init__(self, script: Script, key: bytes, model: str) -> None:
        self.model = model
        self.refusals: list[str] = []
        self._signer = Signer(key)
        self._script = Scripted(script)
        self._lock = threading.Lock()
        self._count = itertools.count(1)
        self._server = FakeProviderServer(default=self._answer)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (the fake's class says the SDK's ``base_url``)."""
        return self._server.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        return self._server.requests

    def enqueue(self, *entries: Entry) -> None:
        """Answer the next requests with ``entries`` (after those already queued)."""
        self._script.enqueue(entries)

    def __enter__(self) -> Self:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()

    def close(self) -> None:
        """Stop serving."""
        self._server.close()

    def _answer(self, request: RecordedRequest) -> Reply:
        raise NotImplementedError
