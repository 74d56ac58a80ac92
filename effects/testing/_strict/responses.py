"""A strict fake of OpenAI's Responses API: streams signed reasoning and compaction, refuses what the real API refuses.

:class:`StrictResponsesServer` answers ``POST /v1/responses`` from a script
(see :mod:`._parts`) with the real event stream: reasoning items whose
``encrypted_content`` it signs, compaction items (scripted, or when the input
passes a ``context_management`` compaction threshold), messages and function
calls, and usage with simulated cached tokens. It stores nothing (as with
``store=false``), so everything must come back in the input. Before answering
it refuses, with the API's error shape and wording:

* an item sent by reference, a reasoning or compaction item without its
  ``encrypted_content`` (404, ``Items are not persisted when `store` is set to
  false``), a ``previous_response_id``;
* encrypted content that was altered, or that belongs to another item
  (``invalid_encrypted_content``);
* a reasoning or compaction item not followed by the item that followed it in
  its response (``was provided without its required following item``);
* a function call sent with its item id but without the reasoning item that
  preceded it in its response (``without its required 'reasoning' item``);
* a ``function_call_output`` without its call, a call without its output.

The following-item rule is applied to compaction items too (the real API's
rule for them is not documented): a compaction item moved elsewhere is refused.
"""

from __future__ import annotations

import json
from typing import Any

from .._fake_server import RecordedRequest, Reply, sse
from .._fake_streams import FakeToolCall
from ._parts import DEFAULT_KEY, Compacted, Part, Script, StrictServer, Thought, pieces, tokens

NOT_STORED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` "
    "set to true, or remove this item from your input."
)


class _Refused(Exception):
    """A check failed: the status, message, param and code of the error to answer with."""

    def __init__(self, message: str, *, status: int = 400, param: str | None = "input", code: str | None = None):
        super().__init__(message)
        self.status, self.param, self.code = status, param, code


class StrictResponsesServer(StrictServer):
    """A loopback Responses-API server that streams signed reasoning and compaction items and refuses requests
    the real API refuses.

    ``script``: the replies in order (a reply is a sequence of parts, or a
    :class:`~effects.testing.Reply` sent as it is), or a function of each
    request's JSON body. ``refusals`` lists the messages of the errors it
    answered; ``requests`` every request (``raw`` holds its bytes). Use it as a
    context manager; ``url + "/v1"`` is the SDK's ``base_url``.
    """

    def __init__(self, script: Script = (), *, key: bytes = DEFAULT_KEY, model: str = "gpt-fake") -> None:
        super().__init__(script, key, model)
        self._issued: dict[str, str] = {}  # item key -> response id
        self._reasoning_of: dict[str, str] = {}  # function call item id -> the reasoning item that preceded it
        self._seen: list[str] = []  # input prefixes already seen (simulated prompt caching)

    def _answer(self, request: RecordedRequest) -> Reply:
        body = request.body
        with self._lock:
            try:
                items = self._check(body)
            except _Refused as refused:
                self.refusals.append(str(refused))
                error = {
                    "message": str(refused),
                    "type": "invalid_request_error",
                    "param": refused.param,
                    "code": refused.code,
                }
                return Reply(status=refused.status, body={"error": error})
            entry = self._script.next(body)
            if entry is None:
                message = f"strict fake: no reply scripted for request {len(self.requests)}"
                return Reply(status=400, body={"error": {"message": message, "type": "invalid_request_error"}})
            if isinstance(entry, Reply):
                return entry
            return Reply.stream(self._stream(list(entry), body, items))

    # --- checks ------------------------------------------------------------------------

    def _check(self, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, dict):
            raise _Refused("The request body must be a JSON object.", param=None)
        if body.get("previous_response_id"):
            raise _Refused(
                f"Previous response with id '{body['previous_response_id']}' not found.", param="previous_response_id"
            )
        _check_text_format(body)
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise _Refused("Invalid type for 'input': expected a string or an array of items.")
        outputs: set[str] = set()
        for position, item in enumerate(items):
            kind = item.get("type", "message")
            if kind == "item_reference":
                raise _Refused(NOT_STORED.format(id=item.get("id")), status=404)
            if kind in ("reasoning", "compaction"):
                self._check_opaque(items, position, item, kind)
            elif kind == "function_call":
                self._check_call(items, position, item)
            elif kind == "function_call_output":
                call_id = item.get("call_id")
                if not any(i.get("type") == "function_call" and i.get("call_id") == call_id for i in items[:position]):
                    raise _Refused(f"No tool call found for function call output with call_id {call_id}.")
                outputs.add(str(call_id))
        for item in items:
            if item.get("type") == "function_call" and str(item.get("call_id")) not in outputs:
                raise _Refused(f"No tool output found for function call {item.get('call_id')}.")
        return items

    def _check_opaque(self, items: list[dict[str, Any]], position: int, item: dict[str, Any], kind: str) -> None:
        item_id = item.get("id")
        if not item.get("encrypted_content"):
            raise _Refused(NOT_STORED.format(id=item_id), status=404)
        claim = self._signer.claim(item.get("encrypted_content"))
        if claim is None or claim.get("item") != item_id:
            raise _Refused(
                f"The encrypted content for item {item_id} could not be verified. Reason: Encrypted content could "
                "not be decrypted or parsed.",
                param=None,
                code="invalid_encrypted_content",
            )
        following = claim.get("next", "")
        after = _key(items[position + 1]) if position + 1 < len(items) else ""
        if following and not _follows(after, following):
            raise _Refused(f"Item '{item_id}' of type '{kind}' was provided without its required following item.")

    def _check_call(self, items: list[dict[str, Any]], position: int, item: dict[str, Any]) -> None:
        """A call sent with the id of a call whose response reasoned first must come after that reasoning item,
        with only items of its own response between them. (Without its id, nothing ties it to a reasoning item.)"""
        call_id = str(item.get("call_id"))
        reasoning = self._reasoning_of.get(str(item.get("id")))
        if reasoning is None:
            return
        response = self._issued.get(f"function_call:{call_id}")
        for earlier in reversed(items[:position]):
            key = _key(earlier)
            if key == f"reasoning:{reasoning}":
                return
            if self._issued.get(key) != response:
                break
        raise _Refused(
            f"Item '{item.get('id')}' of type 'function_call' was provided without its required "
            f"'reasoning' item: '{reasoning}'."
        )

    # --- the stream ----------------------------------------------------------------------

    def _stream(self, parts: list[Part], body: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
        rid = f"resp_fake_{next(self._count)}"
        size = tokens(items)
        if (
            _threshold(body) is not None
            and size > (_threshold(body) or 0)
            and not any(isinstance(p, Compacted) for p in parts)
        ):
            parts = [Compacted(), *parts]
        output = [self._item(rid, index, part, parts) for index, part in enumerate(parts)]
        keys = [_key(item) for item in output]
        for index, item in enumerate(output):
            self._issued[keys[index]] = rid
            if item["type"] in ("reasoning", "compaction"):
                following = keys[index + 1] if index + 1 < len(keys) else ""
                claim = {"item": item["id"], "next": following, "response": rid}
                item["encrypted_content"] = self._signer.token(claim)
            if item["type"] == "function_call":
                reasoning = next((o["id"] for o in reversed(output[:index]) if o["type"] == "reasoning"), None)
                if reasoning is not None:
                    self._reasoning_of[item["id"]] = reasoning
        head = {"id": rid, "object": "response", "created_at": 1_700_000_000, "model": self.model, "output": []}
        events = [
            sse({"type": "response.created", "sequence_number": 0, "response": {**head, "status": "in_progress"}})
        ]
        for index, item in enumerate(output):
            events += _item_events(index, item)
        usage = self._usage(items, parts)
        done = {**head, "status": "completed", "output": output, "usage": usage}
        events.append(sse({"type": "response.completed", "sequence_number": len(events), "response": done}))
        return events

    def _item(self, rid: str, index: int, part: Part, parts: list[Part]) -> dict[str, Any]:
        n = f"{rid.rsplit('_', 1)[1]}_{index}"
        if isinstance(part, Thought):
            return {"id": f"rs_{n}", "type": "reasoning", "summary": [{"type": "summary_text", "text": part.text}]}
        if isinstance(part, Compacted):
            return {"id": f"cmp_{n}", "type": "compaction", "created_by": "server"}
        if isinstance(part, FakeToolCall):
            arguments = "".join(part.argument_pieces)
            return {
                "id": f"fc_{n}", "type": "function_call", "status": "completed",
                "call_id": part.id, "name": part.name, "arguments": arguments,
            }  # fmt: skip
        phase = "commentary" if any(isinstance(p, FakeToolCall) for p in parts[index:]) else "final_answer"
        content = [{"type": "output_text", "text": part, "annotations": [], "logprobs": []}]
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": content,
            "phase": phase,
        }

    def _usage(self, items: list[dict[str, Any]], parts: list[Part]) -> dict[str, Any]:
        """Usage with simulated automatic prompt caching: the longest input prefix seen before counts as cached."""
        prefixes = [json.dumps(items[: n + 1], sort_keys=True) for n in range(len(items))]
        cached = max((tokens(items[: n + 1]) for n, p in enumerate(prefixes) if p in self._seen), default=0)
        self._seen.extend(prefixes)
        reasoning = sum(tokens(p.text) for p in parts if isinstance(p, Thought))
        out = reasoning + sum(tokens(str(p)) for p in parts if not isinstance(p, Thought))
        total = tokens(items)
        return {
            "input_tokens": total,
            "input_tokens_details": {"cached_tokens": min(cached, total)},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": total + out,
        }


def _check_text_format(body: dict[str, Any]) -> None:
    """A ``json_schema`` text format names its schema and gives an object schema."""
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return
    if not fmt.get("name"):
        raise _Refused("Missing required parameter: 'text.format.name'.", param="text.format.name")
    schema = fmt.get("schema")
    if not isinstance(schema, dict):
        raise _Refused("Missing required parameter: 'text.format.schema'.", param="text.format.schema")
    if schema.get("type") != "object":
        raise _Refused(
            f"Invalid schema for response_format '{fmt['name']}': schema must be a JSON Schema of 'type: \"object\"', "
            f"got 'type: \"{schema.get('type')}\"'.",
            param="text.format.schema",
        )


def _item_events(index: int, item: dict[str, Any]) -> list[str]:
    """The events streaming one output item: added (in progress), its deltas, done (whole)."""
    kind = item["type"]
    started = {**item, "status": "in_progress"} if "status" in item else dict(item)
    events = []
    if kind == "message":
        started["content"] = []
    elif kind == "function_call":
        started["arguments"] = ""
    elif kind == "reasoning":
        started = {k: v for k, v in item.items() if k != "encrypted_content"} | {"summary": []}
    events.append(sse({"type": "response.output_item.added", "output_index": index, "item": started}))
    if kind == "message":
        text = item["content"][0]["text"]
        for piece in pieces(text):
            delta = {"item_id": item["id"], "output_index": index, "content_index": 0, "delta": piece, "logprobs": []}
            events.append(sse({"type": "response.output_text.delta", **delta}))
    elif kind == "function_call":
        for piece in pieces(item["arguments"]):
            delta = {"item_id": item["id"], "output_index": index, "delta": piece}
            events.append(sse({"type": "response.function_call_arguments.delta", **delta}))
    elif kind == "reasoning":
        for piece in pieces(item["summary"][0]["text"]):
            delta = {"item_id": item["id"], "output_index": index, "summary_index": 0, "delta": piece}
            events.append(sse({"type": "response.reasoning_summary_text.delta", **delta}))
    events.append(sse({"type": "response.output_item.done", "output_index": index, "item": item}))
    return events


def _key(item: dict[str, Any]) -> str:
    """An input or output item's identity: ``function_call:<call id>``, ``<type>:<id>`` (``message:`` for an
    assistant message sent without its id)."""
    kind = item.get("type", "message")
    if kind == "function_call":
        return f"function_call:{item.get('call_id')}"
    if kind == "message" and item.get("role") != "assistant":
        return f"message/{item.get('role')}"
    return f"{kind}:{item.get('id') or ''}"


def _follows(after: str, following: str) -> bool:
    """Whether the item ``after`` is the one that followed (an assistant message sent without its id matches any
    assistant message)."""
    return after == following or (after == "message:" and following.startswith("message:"))


def _threshold(body: dict[str, Any]) -> int | None:
    for entry in body.get("context_management") or ():
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            threshold = entry.get("compact_threshold")
            return threshold if isinstance(threshold, int) else 0
    return None
