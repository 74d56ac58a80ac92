"""What travels through Temporal: small dataclasses of ids, sequence numbers and JSON-encoded inputs.

Nothing here carries a transcript: the model's activity receives a reference
(session id, sequence number, effect key) and loads the context from the store
itself; a tool's activity is handed the call (its name and arguments, already
in the history as the model's answer), so it needs no store before the tool
runs. Results carry only the inputs they produced. So a workflow's history
grows with the number of inputs, not with the size of the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TASK_QUEUE = "agent-core"
"""The task queue workers poll and sessions start on, unless told otherwise."""

WORKFLOW = "agent-core-session"
OPEN, APPEND, CALL_LLM, CALL_TOOL = (
    "agent-core-open",
    "agent-core-append",
    "agent-core-call-llm",
    "agent-core-call-tool",
)
CHILD_SPENT = "agent-core-child-spent"
"""The signal a child session's workflow sends its caller's as it spends (see :class:`SpendReport`)."""
REJECTED = "agent-core-rejection"
"""The ``type`` of the ``ApplicationError`` a refused input comes back as (its detail: the Rejection's JSON)."""


@dataclass(frozen=True)
class SessionArgs:
    """The workflow's argument, and all a continue-as-new carries: the session and how far its log is.

    ``seq`` is 0 for the first run: the session is created from ``config``
    (JSON of an ``AgentConfig``; ``""`` for the defaults) with the worker's tools,
    or an existing log (written by a single process, say) is adopted. Later runs
    carry the sequence number the previous run committed up to and reload the
    state from the store's snapshot and tail. ``continue_every`` inputs per run
    bound each run's history; ``heartbeat_ms`` bounds how long a dead worker's
    activity goes unnoticed.

    A child session (a call of an agent tool, run as a child workflow) names
    the ``agent`` tool whose agent it runs (``""``: the worker's own agent) and
    carries the call's ``arguments``: the ``open`` activity validates them and
    gives the child its user message, and the run ends with the call's result
    once the child's turn ends.
    """

    session_id: str
    seq: int = 0
    config: str = ""
    continue_every: int = 200
    heartbeat_ms: int = 10_000
    agent: str = ""
    arguments: str = ""


@dataclass(frozen=True)
class ChildAgent:
    """An agent tool of the session's agent: the config of its child sessions (JSON, without lineage), its
    ``max_depth`` (0: none) and how long one call may run (``timeout_ms``, 0: no limit)."""

    config: str
    max_depth: int = 0
    timeout_ms: int = 0


@dataclass(frozen=True)
class Loaded:
    """The session's state (JSON) after record ``seq``: what a run starts from.

    ``children`` are the agent tools of the session's agent, by name: their
    calls run as child workflows. For a child session, ``task`` is its user
    message (from the call's arguments), or ``refused`` the call's
    ``tool-call-completed`` (JSON) when they do not validate (no session is
    made then).
    """

    seq: int
    state: str
    children: dict[str, ChildAgent] = field(default_factory=dict)
    task: str = ""
    refused: str = ""


@dataclass(frozen=True)
class Batch:
    """Inputs (JSON each) to append to the session's log, which must have exactly ``expected`` records."""

    session_id: str
    expected: int
    inputs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Appended:
    """What an append did: ``seq`` is the log's length after the batch; ``logged`` what an earlier attempt wrote.

    A workflow task that committed batches and then died (its worker killed,
    or timed out under load) is run again from its start, and builds the same
    batches again, stamped with its clock's new time: the log holds the first
    attempt's inputs, the same but for their timestamps. ``logged`` then holds
    the batch's records as the log has them (JSON each), nothing is written
    (``seq`` is the length before the batch), and the workflow adopts them
    (the log is the truth) and appends again.
    """

    seq: int
    logged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EffectRef:
    """An effect by reference: the key ``effects_at`` gives it in the state after record ``seq``; ``agent`` names
    the agent tool whose agent runs the session (``""``: the worker's own agent)."""

    session_id: str
    seq: int
    key: str
    agent: str = ""


@dataclass(frozen=True)
class ToolCall:
    """A ``call-tool`` effect handed whole to its activity; ``floor`` is the newest timestamp of the state it
    runs in (its result is stamped no earlier); ``agent`` names the agent tool whose agent's tools it is among
    (``""``: the worker's own agent)."""

    session_id: str
    key: str
    tool_call_id: str
    name: str
    parameters: str
    floor: int = 0
    agent: str = ""


@dataclass(frozen=True)
class Submitted:
    """Where an input sent from outside landed: its sequence number in the session's log."""

    seq: int


@dataclass(frozen=True)
class SpendReport:
    """What the child session run by the call ``tool_call_id`` has spent so far, in all (a ``Spend`` as JSON)."""

    tool_call_id: str
    spent: str
