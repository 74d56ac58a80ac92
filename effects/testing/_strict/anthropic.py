"""A strict fake of Anthropic's messages API: streams signed thinking, refuses what the real API refuses.

:class:`StrictAnthropicServer` answers ``POST /v1/messages`` from a script
(see :mod:`._parts`) with the real event stream: ``thinking`` blocks (text and a
signature), ``redacted_thinking`` blocks, text and ``tool_use`` blocks, usage
with simulated prompt-cache reads and writes. Before answering it checks the
request and refuses, with a 400 in Anthropic's error shape and the API's own
wording, what the real API refuses:

* a thinking block whose text or signature changed (``Invalid `signature` in
  `thinking` block``), a redacted block whose data changed;
* in a tool loop (the last message holds ``tool_result`` blocks), the latest
  assistant message's thinking blocks missing, altered, reordered or moved among
  its text and ``tool_use`` blocks (``cannot be modified``), and, with thinking
  on, that message not starting with its thinking;
* a ``tool_use`` without its ``tool_result`` in the next message, a
  ``tool_result`` without its ``tool_use``, empty text blocks, more than four
  ``cache_control`` breakpoints.

It is stricter than the real API in one way, said here so a test knows: a
thinking block of any other assistant message must still stand with the tool
uses of its own response, in its order (the real API may ignore such blocks).
"""

from __future__ import annotations

import json
from typing import Any

from .._fake_server import RecordedRequest, Reply, sse
from .._fake_streams import FakeToolCall
from ._parts import DEFAULT_KEY, Compacted, Part, Refused, Script, StrictServer, Thought, digest, pieces, tokens

_THINKING = ("thinking", "redacted_thinking")
MUST_START = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` "
    "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
    "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
    "this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
UNMODIFIED = (
    "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)


class StrictAnthropicServer(StrictServer):
    """A loopback messages-API server that streams signed thinking and refuses requests the real API refuses.

    ``script``: the replies in order (a reply is a sequence of parts, or a
    :class:`~effects.testing.Reply` sent as it is), or a function of each
    request's JSON body. Thinking parts are left out of a reply when the
    request does not turn thinking on. ``refusals`` lists the messages of the
    400s it answered; ``requests`` every request (``raw`` holds its bytes).
    Use it as a context manager; ``url`` is the SDK's ``base_url``.
    """

    def __init__(self, script: Script = (), *, key: bytes = DEFAULT_KEY, model: str = "claude-fake") -> None:
        super().__init__(script, key, model)
        self._layouts: dict[str, list[str]] = {}  # response id -> its blocks' keys, in order
        self._cached: set[str] = set()

    def _answer(self, request: RecordedRequest) -> Reply:
        body = request.body
        with self._lock:
            try:
                self._check(body)
            except Refused as refused:
                message = str(refused)
                self.refusals.append(message)
                error = {"type": "invalid_request_error", "message": message}
                return Reply(status=400, body={"type": "error", "error": error, "request_id": "req_strict_fake"})
            entry = self._script.next(body)
            if entry is None:
                message = f"strict fake: no reply scripted for request {len(self.requests)}"
                return Reply(
                    status=400, body={"type": "error", "error": {"type": "invalid_request_error", "message": message}}
                )
            if isinstance(entry, Reply):
                return entry
            return Reply.stream(self._stream(entry, body))

    # --- checks ------------------------------------------------------------------------

    def _check(self, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise Refused("messages: Field required")
        messages = [_normalized(message) for message in body["messages"]]
        breakpoints = _breakpoints(body)
        if breakpoints > 4:
            raise Refused(f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}.")
        for i, message in enumerate(messages):
            for j, block in enumerate(message["content"]):
                self._check_block(i, j, message["role"], block)
        _check_pairs(messages)
        thinking = isinstance(body.get("thinking"), dict) and body["thinking"].get("type") in ("enabled", "adaptive")
        _check_tool_choice(body, thinking)
        assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        for i in assistants:
            self._check_layout(messages, i, latest=i == assistants[-1], thinking=thinking)

    def _check_block(self, i: int, j: int, role: str, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "text" and not block.get("text"):
            raise Refused(f"messages.{i}.content.{j}.text: text content blocks must be non-empty")
        if kind not in _THINKING:
            return
        if role != "assistant":
            raise Refused(f"messages.{i}.content.{j}.type: `{kind}` blocks are only accepted in assistant messages")
        extra = sorted(set(block) - ({"type", "thinking", "signature"} if kind == "thinking" else {"type", "data"}))
        if extra:
            raise Refused(f"messages.{i}.content.{j}.{kind}.{extra[0]}: Extra inputs are not permitted")
        if self._key(block) is None:
            field = "signature" if kind == "thinking" else "data"
            raise Refused(f"messages.{i}.content.{j}: Invalid `{field}` in `{kind}` block")

    def _check_layout(self, messages: list[dict[str, Any]], i: int, *, latest: bool, thinking: bool) -> None:
        """A message holding blocks of a response that thought must hold them as that response had them."""
        content = messages[i]["content"]
        keys = [self._key(block) or "" for block in content]
        origins = sorted({origin for key in keys if (origin := self._origin(key)) is not None})
        if not origins:
            return
        if len(origins) > 1:  # blocks of two responses: the message is its tool uses' response's, the rest moved
            uses = [self._origin(key) for key in keys if key.startswith("tool_use:")]
            owner = next((origin for origin in uses if origin is not None), origins[0])
            j = next(j for j, key in enumerate(keys) if self._origin(key) not in (owner, None))
            raise Refused(UNMODIFIED.format(i=i, j=j))
        original = self._layouts.get(origins[0], [])  # empty: signed by another fake with the same key
        if not any(key.startswith(("thinking:", "redacted:")) for key in original):
            return
        in_loop = i + 1 < len(messages) and any(b.get("type") == "tool_result" for b in messages[i + 1]["content"])
        if latest and in_loop:  # the turn the model continues: its thinking must come back as it was
            if keys == original:
                return
            first = content[0].get("type") if content else "nothing"
            if thinking and first not in _THINKING:
                raise Refused(MUST_START.format(i=i, found=first))
            j = next(
                (j for j, (a, b) in enumerate(zip(keys, original, strict=False)) if a != b),
                min(len(keys), len(original)),
            )
            raise Refused(UNMODIFIED.format(i=i, j=j))
        present = [key for key in keys if key in original and key != "text"]
        if present != sorted(present, key=original.index):
            j = next(j for j, key in enumerate(keys) if key in present)
            raise Refused(UNMODIFIED.format(i=i, j=j))

    def _key(self, block: dict[str, Any]) -> str | None:
        """A block's identity: ``thinking:<response>:<n>`` for thinking this fake signed (``None`` when it did not
        or it was altered), ``tool_use:<id>``, ``text``."""
        kind = block.get("type")
        if kind == "thinking":
            claim = self._signer.claim(block.get("signature"))
            if claim is None or claim.get("digest") != digest(str(block.get("thinking"))):
                return None
            return f"thinking:{claim['response']}:{claim['n']}"
        if kind == "redacted_thinking":
            claim = self._signer.claim(block.get("data"))
            return None if claim is None else f"redacted:{claim['response']}:{claim['n']}"
        if kind == "tool_use":
            return f"tool_use:{block.get('id')}"
        return "text" if kind == "text" else str(kind)

    def _origin(self, key: str) -> str | None:
        if key.startswith(("thinking:", "redacted:")):
            return key.split(":")[1]
        if key.startswith("tool_use:"):
            return next((rid for rid, layout in self._layouts.items() if key in layout), None)
        return None

    # --- the stream ----------------------------------------------------------------------

    def _stream(self, parts: Any, body: dict[str, Any]) -> list[str]:
        rid = f"msg_fake_{next(self._count)}"
        thinking = isinstance(body.get("thinking"), dict) and body["thinking"].get("type") in ("enabled", "adaptive")
        kept = [part for part in parts if thinking or not isinstance(part, Thought)]
        read, written, fresh = self._cache_use(body)
        usage = {"input_tokens": fresh, "cache_creation_input_tokens": written, "cache_read_input_tokens": read}
        message: dict[str, Any] = {
            "id": rid, "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1},
        }  # fmt: skip
        events = [sse({"type": "message_start", "message": message}, "message_start")]
        layout: list[str] = []
        thought = 0
        for index, part in enumerate(kept):
            events += _block(index, self._block(rid, index, part, layout))
            if isinstance(part, Thought):
                thought += tokens(part.text)
        self._layouts[rid] = layout
        stop = "tool_use" if any(isinstance(p, FakeToolCall) for p in kept) else "end_turn"
        out = thought + sum(tokens(str(p)) for p in kept if not isinstance(p, Thought))
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": out, "output_tokens_details": {"thinking_tokens": thought}},
        }
        events.append(sse(delta, "message_delta"))
        events.append(sse({"type": "message_stop"}, "message_stop"))
        return events

    def _block(
        self, rid: str, index: int, part: Part, layout: list[str]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A part's ``content_block_start`` block and its deltas; its key appended to ``layout``."""
        if isinstance(part, Thought):
            claim = {"response": rid, "n": str(index)}
            if part.redacted:
                layout.append(f"redacted:{rid}:{index}")
                return {"type": "redacted_thinking", "data": self._signer.token(claim)}, []
            layout.append(f"thinking:{rid}:{index}")
            signature = self._signer.token({**claim, "digest": digest(part.text)})
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces(part.text)]
            return {"type": "thinking", "thinking": "", "signature": ""}, [
                *deltas,
                {"type": "signature_delta", "signature": signature},
            ]
        if isinstance(part, FakeToolCall):
            layout.append(f"tool_use:{part.id}")
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in part.argument_pieces]
            return {"type": "tool_use", "id": part.id, "name": part.name, "input": {}}, deltas
        if isinstance(part, Compacted):
            raise ValueError("the Anthropic fake streams no compaction items (a Responses part)")
        layout.append("text")
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": piece} for piece in pieces(part)]

    def _cache_use(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """Simulated prompt caching: (read, written, fresh) input tokens, each breakpoint's prefix cached after."""
        segments = _segments(body)
        total = sum(tokens(segment) for segment, _ in segments)
        prefixes, size, seen = [], 0, []
        for segment, marked in segments:
            size += tokens(segment)
            seen.append(segment)
            if marked:
                prefixes.append((json.dumps(seen, sort_keys=True), size))
        read = max((size for key, size in prefixes if key in self._cached), default=0)
        last = prefixes[-1][1] if prefixes else 0
        written = last - read if prefixes and prefixes[-1][0] not in self._cached and last > read else 0
        self._cached.update(key for key, _ in prefixes)
        return read, written, total - read - written


def _block(index: int, built: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[str]:
    start, deltas = built
    events = [sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")]
    events += [sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas]
    events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return events


def _normalized(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise Refused("messages: each message needs a role of 'user' or 'assistant'")
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise Refused("messages: content must be a string or a list of blocks")
    return {"role": message["role"], "content": content}


def _check_tool_choice(body: dict[str, Any], thinking: bool) -> None:
    """A forced tool choice (``any``, ``tool``) needs thinking off, and ``tool`` a tool of that name."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict):
        return
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise Refused(f"tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'; got {kind!r}")
    if kind in ("any", "tool") and thinking:
        raise Refused("Thinking may not be enabled when tool_choice forces tool use.")
    names = [tool.get("name") for tool in body.get("tools") or () if isinstance(tool, dict)]
    if kind in ("any", "tool") and not names:
        raise Refused("tool_choice may only be specified while providing tools.")
    if kind == "tool" and choice.get("name") not in names:
        raise Refused(f"Tool '{choice.get('name')}' not found in the provided tools.")


def _check_pairs(messages: list[dict[str, Any]]) -> None:
    """Every ``tool_use`` answered in the next message, every ``tool_result`` answering the previous one."""
    for i, message in enumerate(messages):
        uses = [b.get("id") for b in message["content"] if b.get("type") == "tool_use"]
        after = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {b.get("tool_use_id") for b in after if b.get("type") == "tool_result"}
        missing = [u for u in uses if u not in answered]
        if uses and i + 1 < len(messages) and missing:
            raise Refused(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
        before = messages[i - 1]["content"] if i else []
        asked = {b.get("id") for b in before if b.get("type") == "tool_use"}
        for j, block in enumerate(message["content"]):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                raise Refused(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )


def _segments(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """The cacheable prefix in the API's order (tools, system, messages), each block with whether it carries a
    breakpoint (the breakpoint itself left out of what is cached)."""
    blocks: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    blocks += system if isinstance(system, list) else ([{"type": "text", "text": system}] if system else [])
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks += content if isinstance(content, list) else [content]
    return [
        ({k: v for k, v in b.items() if k != "cache_control"}, "cache_control" in b)
        if isinstance(b, dict)
        else (b, False)
        for b in blocks
    ]


def _breakpoints(body: dict[str, Any]) -> int:
    return sum(marked for _, marked in _segments(body))
