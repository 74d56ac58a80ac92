"""Approvals across a tree of sessions: what waits for a person anywhere below a session, and how a decision
taken at that session reaches the child session that holds the call.

A call that needs approval waits in the session that proposed it. When that
session is a child (it runs as a tool call of its parent), the parent's call
waits too: its tool asked for input (``tool-call-input-required``) with one
request per call waiting below it, keyed by the call's *address*
(``<session id>/<tool call id>``), each naming the path of sessions down to the
call. So the parent's own log says what waits below it, and so on up to the
root, whose phase is ``awaiting-approval``. A decision taken at the root
becomes ``tool-call-input-provided`` on the call that leads towards the child;
the child's tool passes it on, one level at a time, until it is
``tool-call-approved`` or ``tool-call-denied`` in the session that holds the call.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from ._inputs import AgentInput, ToolCallApproved, ToolCallDenied, ToolCallInputProvided
from ._state import AgentState

APPROVAL_KIND = "agent-core/approval"
"""The ``kind`` of a request that stands for a call awaiting approval in a child session."""


class PendingApproval(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call that waits for a person's decision, in a session or in a child session below it.

    ``address`` names it for :func:`decision_inputs` (and ``Session.approve``):
    ``<session id>/<tool call id>``, the session that holds the call and the call's
    id (a call of the session itself may also be named by its id alone). ``path`` is the session ids from this session down to the one that
    holds the call (one id for the session's own call; root, child, grandchild for
    a grandchild's). ``via`` is this session's call that leads to the child (empty
    for its own call).
    """

    address: str
    path: tuple[str, ...]
    tool_call_id: str
    tool: str
    arguments: str
    via: str = ""


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """A person's decision on a call: approve it, or deny it with a ``reason`` the model reads."""

    approve: bool
    reason: str = ""


class _Request(msgspec.Struct, frozen=True, kw_only=True):
    """How a child's waiting call is written among its parent's call's requests."""

    kind: str
    path: tuple[str, ...]
    tool_call_id: str
    tool: str
    arguments: str = ""


class _Answer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How a decision is written among the answers to a parent's call."""

    action: str
    reason: str = ""


_REQUESTS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_REQUEST = msgspec.json.Decoder(_Request)
_ANSWERS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ANSWER = msgspec.json.Decoder(_Answer)


def pending_approvals(state: AgentState) -> tuple[PendingApproval, ...]:
    """Every call waiting for a decision in this session and in the child sessions below it, in request order.

    Derived from this session's state alone: its calls ``awaiting-approval``, and
    the requests of its calls whose child session waits (see the module's text).
    """
    turn = state.turn
    if turn is None:
        return ()
    pending: list[PendingApproval] = []
    for call_id in turn.awaiting_ids:
        record = state.tool_calls.get(call_id)
        if record is None:  # pragma: no cover - an invariant: every awaiting id has a record
            continue
        if record.status == "awaiting-approval":
            pending.append(
                PendingApproval(
                    address=f"{state.session_id}/{call_id}",
                    path=(state.session_id,),
                    tool_call_id=call_id,
                    tool=record.name,
                    arguments=record.parameters,
                )
            )
        elif record.status == "awaiting-input":
            for address, request in _child_requests(record.input_requests):
                pending.append(
                    PendingApproval(
                        address=address,
                        path=(state.session_id, *request.path),
                        tool_call_id=request.tool_call_id,
                        tool=request.tool,
                        arguments=request.arguments,
                        via=call_id,
                    )
                )
    return tuple(pending)


def approval_requests(state: AgentState) -> str:
    """The requests a parent's call asks with while this (child) session waits: one per call waiting in it or
    below it, keyed by address (a JSON object; ``{}`` when nothing waits for a decision)."""
    requests: dict[str, _Request] = {}
    for waiting in pending_approvals(state):
        requests[waiting.address] = _Request(
            kind=APPROVAL_KIND,
            path=waiting.path,
            tool_call_id=waiting.tool_call_id,
            tool=waiting.tool,
            arguments=waiting.arguments,
        )
    return msgspec.json.encode(requests).decode()


def decision_inputs(state: AgentState, decisions: Mapping[str, Decision], timestamp: int) -> tuple[AgentInput, ...]:
    """The inputs that take ``decisions`` (address -> decision) into this session, towards the calls they name.

    A decision on a call of this session is ``tool-call-approved`` or
    ``tool-call-denied``; decisions on calls of child sessions are gathered into one
    ``tool-call-input-provided`` per call of this session that leads to them. Any
    other address (a call of this session named by its id alone, or no waiting call) becomes ``tool-call-approved`` (or
    ``-denied``) of that id, which the reducer refuses, saying why.
    """
    waiting_at = {p.address: p for p in pending_approvals(state)}
    inputs: list[AgentInput] = []
    answers: dict[str, dict[str, _Answer]] = {}
    for address, decision in decisions.items():
        waiting = waiting_at.get(address)
        if waiting is not None and waiting.via:
            answer = _Answer(action="approve") if decision.approve else _Answer(action="deny", reason=decision.reason)
            answers.setdefault(waiting.via, {})[address] = answer
            continue
        call_id = waiting.tool_call_id if waiting is not None else address
        if decision.approve:
            inputs.append(ToolCallApproved(timestamp=timestamp, tool_call_id=call_id))
        else:
            inputs.append(ToolCallDenied(timestamp=timestamp, tool_call_id=call_id, reason=decision.reason))
    for via, answered in answers.items():
        responses = msgspec.json.encode(answered).decode()
        inputs.append(ToolCallInputProvided(timestamp=timestamp, tool_call_id=via, responses=responses))
    return tuple(inputs)


def decisions_in(responses: str) -> dict[str, Decision]:
    """The decisions among the answers a parent's call was given (address -> decision); answers of any other
    shape (a person's answers to a tool's own questions) are not decisions and are left out."""
    decisions: dict[str, Decision] = {}
    try:
        answers = _ANSWERS.decode(responses)
    except msgspec.DecodeError:
        return decisions
    for address, raw in answers.items():
        try:
            answer = _ANSWER.decode(raw)
        except msgspec.DecodeError:
            continue
        if answer.action in ("approve", "deny"):
            decisions[address] = Decision(approve=answer.action == "approve", reason=answer.reason)
    return decisions


def _child_requests(requests: str) -> list[tuple[str, _Request]]:
    """The requests of a call that stand for calls waiting in a child session (others are a tool's own questions)."""
    try:
        decoded = _REQUESTS.decode(requests)
    except msgspec.DecodeError:
        return []
    found: list[tuple[str, _Request]] = []
    for address, raw in decoded.items():
        try:
            request = _REQUEST.decode(raw)
        except msgspec.DecodeError:
            continue
        if request.kind == APPROVAL_KIND and request.path:
            found.append((address, request))
    return found
