"""``SessionTracer``: spans of a running session, from its event timeline, as they finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_core import AgentState

from .._agent import ChildEvent, SessionClosed, SessionOpened
from .._machine import EffectFailed, EffectStarted, MachineEvent, StateUpdated
from ._conventions import Conventions
from ._otel import to_otel
from ._spans import SpanEvent, SpanProjection

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor

    from .._agent import Session


class SessionTracer:
    """Feeds a running session's ``state-updated`` events through :class:`SpanProjection` and hands each
    finished span to an OpenTelemetry ``SpanProcessor`` (``BatchSpanProcessor(OTLPSpanExporter())`` in
    production, ``SimpleSpanProcessor(InMemorySpanExporter())`` in tests).

    Spans are the ones :func:`~effects.session_spans` computes from the stored log,
    with the same ids, plus what only a live run knows: an
    ``agent_core.effect.started`` event when the runner started the effect here,
    and an ``exception`` event when an effect raised. A resumed session
    continues its trace: open spans are taken from the state at subscription.
    The child sessions its agent tools run (:class:`~effects.ChildEvent`) are
    followed too: their spans join the root session's trace, each child's
    ``invoke_agent`` under the ``execute_tool`` span of the call that runs it.
    Use as a context manager, or call :meth:`close` to unsubscribe.
    """

    def __init__(self, session: Session, processor: SpanProcessor, conventions: Conventions | None = None) -> None:
        self.processor = processor
        self._conventions = conventions
        self._own = _Followed(session.state, conventions)
        self._children: dict[str, _Followed] = {}  # the child sessions open now, by id
        self._unsubscribe: Callable[[], None] = session.subscribe(self._on_event)

    def _on_event(self, event: MachineEvent) -> None:
        if not isinstance(event, ChildEvent):
            self._own.follow(event, self.processor)
            return
        # A child session's (an agent called as a tool): its spans nest under the calling execute_tool span.
        child_id, inner = event.path[-1], event.event
        if isinstance(inner, SessionOpened):
            self._children[child_id] = _Followed(inner.state, self._conventions)
        elif isinstance(inner, SessionClosed):
            self._children.pop(child_id, None)
        elif child_id in self._children:
            self._children[child_id].follow(inner, self.processor)

    def close(self) -> None:
        """Stop following the session (spans still open are not reported)."""
        self._unsubscribe()

    def __enter__(self) -> SessionTracer:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class _Followed:
    """One session's spans, followed from its events: its last state and its open spans."""

    def __init__(self, state: AgentState, conventions: Conventions | None) -> None:
        self.state = state
        self.projection = SpanProjection(conventions, state=state)

    def follow(self, event: MachineEvent, processor: SpanProcessor) -> None:
        """Hand ``processor`` the spans ``event`` ended; note the effects it started or saw fail."""
        if isinstance(event, StateUpdated):
            before, after = self.state, event.state
            self.state = after
            for span in self.projection.step(after.step, event.input, before, after):
                processor.on_end(to_otel(span))
        elif isinstance(event, EffectStarted):
            self.projection.add_event(
                event.key, SpanEvent(name="agent_core.effect.started", timestamp=self.state.timestamp)
            )
        elif isinstance(event, EffectFailed):
            error = event.error
            attributes = {"exception.type": type(error).__name__, "exception.message": str(error)}
            self.projection.add_event(
                event.key, SpanEvent(name="exception", timestamp=self.state.timestamp, attributes=attributes)
            )
