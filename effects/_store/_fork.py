"""``fork_session``: a new session that starts with a prefix of another (rollback is a fork), with its children.

A session whose tool calls ran child sessions (agents used as tools, see
:meth:`effects.Agent.as_tool`) is the root of a tree; forking it at record N
forks the tree as it stood at N. Which children stood at N, and with which
records:

* a call still ``pending`` (or awaiting approval) at N had not started: its
  child did not exist yet, and is not forked (the forked session starts it when
  it runs the call);
* a call ``completed`` at N had its answer: its child is copied whole (nothing
  writes a child once its call has its result, but the cancellation that closed
  them both);
* a call ``running`` at N: its child is copied up to its last record stamped at
  or before record N's timestamp (the sessions of a tree share one clock, and
  each session's timestamps never go down; records of the same millisecond
  count as before). Any prefix of a log is a state a crash could have left, so
  the forked parent, resumed, goes on with the forked child from there.

Children of children follow the same rule, with the same timestamp. Each
forked child is a new session ``<forked parent>:<tool call id>`` (the id its
forked parent's call names, so resuming the forked parent finds it) whose
``session-started`` names its new id and its new lineage (the forked parent,
the same tool call, the forked tree's root: the fork itself, or, when the
forked session is itself a child, its tree's root; the same depth), and whose metadata names the log
and record it was cut from. Its later records are the same inputs; their chain
is its own, since it starts from another first record. The forked root keeps
its records' bytes, as any fork.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from agent_core import AgentInput, AgentState, Lineage, SessionStarted

from ._errors import SessionExists
from ._integrity import Position, Step, fold
from ._journal import SessionJournal
from ._protocol import EventStore, session_exists
from ._records import Origin, StoredInput
from ._snapshots import DEFAULT_SNAPSHOT_EVERY


def child_session_id(parent_session_id: str, tool_call_id: str) -> str:
    """The id of the child session that the call ``tool_call_id`` of ``parent_session_id`` runs."""
    return f"{parent_session_id}:{tool_call_id}"


@dataclass(frozen=True)
class Forked:
    """One session of a forked tree: its new id, and the log and record it was cut from."""

    session_id: str
    source: Origin


@dataclass(frozen=True)
class _Child:
    """A child to fork: its log's inputs up to the cut, and where it goes in the new tree."""

    source: Origin
    new_id: str
    lineage: Lineage
    inputs: Sequence[AgentInput]


def fork_session(
    store: EventStore,
    session_id: str,
    at: int,
    *,
    new_id: str | None = None,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
) -> SessionJournal:
    """Copy records ``1..at`` of ``session_id`` into a new session and return its journal; fork its children.

    The copied records keep their bytes and hashes, so both logs share their
    chain up to ``at``, and the new session's metadata names its parent and
    ``at`` (the log itself is not changed: its ``session-started`` still
    carries the original id). ``new_id`` defaults to ``"<session_id>@<at>"``
    (with a ``.2``, ``.3``... suffix when taken). Rolling a session back to
    step ``at`` is this fork; continue it through the returned journal.

    The child sessions its calls had started by record ``at`` are forked with
    it, down the tree, each as it stood then (see the module's rule), under
    ``<new id>:<tool call id>`` with its lineage naming the new tree. Raises
    :class:`SessionExists` when one of those ids is taken (nothing is written then).
    """
    return fork_tree(store, session_id, at, new_id=new_id, snapshot_every=snapshot_every)[0]


def fork_tree(
    store: EventStore,
    session_id: str,
    at: int,
    *,
    new_id: str | None = None,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
) -> tuple[SessionJournal, list[Forked]]:
    """:func:`fork_session`, and the children it forked (parents before their children)."""
    length = store.session(session_id).length
    if not 1 <= at <= length:
        raise ValueError(f"session {session_id!r} has records 1 to {length}; cannot fork at {at}")
    target = new_id if new_id is not None else _free_id(store, f"{session_id}@{at}")
    if new_id is not None and session_exists(store, new_id):
        raise SessionExists(new_id, store.session(new_id).length)
    copied: list[StoredInput] = []
    end = fold(session_id, store.read(session_id, 1, at), Position.start(), at, on_step=lambda r, *_: copied.append(r))
    lineage = end.state.config.lineage
    root = lineage.root_session_id if lineage is not None else target
    children = _children(store, session_id, target, root, end.state, end.state.timestamp)
    for child in children:  # all checked before anything is written
        if session_exists(store, child.new_id):
            raise SessionExists(child.new_id, store.session(child.new_id).length)
    store.append(target, copied, expected=0, parent=Origin(session_id=session_id, seq=at))
    journal = SessionJournal(store, target, position=end, snapshot_every=snapshot_every)
    journal.snapshot()
    for child in children:
        _write(store, child, snapshot_every)
    return journal, [Forked(session_id=child.new_id, source=child.source) for child in children]


def _children(store: EventStore, source_id: str, new_id: str, root: str, state: AgentState, until: int) -> list[_Child]:
    """The children of ``source_id`` (in ``state``) to fork under ``new_id``, then theirs, depth first."""
    found: list[_Child] = []
    for call_id in state.tool_call_log:
        status = state.tool_calls[call_id].status
        child_id = child_session_id(source_id, call_id)
        if status in ("pending", "awaiting-approval") or not session_exists(store, child_id):
            continue
        length = store.session(child_id).length
        steps: list[tuple[AgentInput, AgentState]] = []
        fold(child_id, store.read(child_id, 1, length), Position.start(), length, on_step=_collect(steps))
        first = steps[0][0]
        if not (
            isinstance(first, SessionStarted)
            and first.config.lineage is not None
            and (first.config.lineage.parent_session_id, first.config.lineage.parent_tool_call_id)
            == (source_id, call_id)
        ):
            continue  # a session that happens to have the id, not the one this call started
        cut = length if status == "completed" else sum(1 for inp, _ in steps if inp.timestamp <= until)
        if cut == 0:
            continue
        forked_id = child_session_id(new_id, call_id)
        # As deep in the new tree as the source was in its own: the forked root stands where its source stood.
        depth = first.config.lineage.depth
        lineage = Lineage(parent_session_id=new_id, parent_tool_call_id=call_id, root_session_id=root, depth=depth)
        inputs = [inp for inp, _ in steps[:cut]]
        found.append(_Child(Origin(session_id=child_id, seq=cut), forked_id, lineage, inputs))
        found.extend(_children(store, child_id, forked_id, root, steps[cut - 1][1], until))
    return found


def _collect(steps: list[tuple[AgentInput, AgentState]]) -> Step:
    """An ``on_step`` keeping each input with the state after it."""

    def step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        steps.append((inp, after))

    return step


def _write(store: EventStore, child: _Child, snapshot_every: int) -> None:
    """The forked child's log: its ``session-started`` naming its new id and lineage, then its inputs."""
    first = child.inputs[0]
    assert isinstance(first, SessionStarted)
    started = msgspec.structs.replace(
        first, session_id=child.new_id, config=msgspec.structs.replace(first.config, lineage=child.lineage)
    )
    journal = SessionJournal(store, child.new_id, parent=child.source, snapshot_every=snapshot_every)
    journal.append([started, *child.inputs[1:]])
    journal.snapshot()


def _free_id(store: EventStore, base: str) -> str:
    candidate, number = base, 1
    while session_exists(store, candidate):
        number += 1
        candidate = f"{base}.{number}"
    return candidate
