"""``SessionTracer``: spans of a running session, from its event timeline, as they finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_core import AgentState

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
    Use as a context manager, or call :meth:`close` to unsubscribe.
    """

    def __init__(self, session: Session, processor: SpanProcessor, conventions: Conventions | None = None) -> None:
        self.processor = processor
        self._state: AgentState = session.state
        self._projection = SpanProjection(conventions, state=self._state)
        self._unsubscribe: Callable[[], None] = session.subscribe(self._on_event)

    def _on_event(self, event: MachineEvent) -> None:
        if isinstance(event, StateUpdated):
            before, after = self._state, event.state
            self._state = after
            for span in self._projection.step(after.step, event.input, before, after):
                self.processor.on_end(to_otel(span))
        elif isinstance(event, EffectStarted):
            self._projection.add_event(
                event.key, SpanEvent(name="agent_core.effect.started", timestamp=self._state.timestamp)
            )
        elif isinstance(event, EffectFailed):
            error = event.error
            attributes = {"exception.type": type(error).__name__, "exception.message": str(error)}
            self._projection.add_event(
                event.key, SpanEvent(name="exception", timestamp=self._state.timestamp, attributes=attributes)
            )

    def close(self) -> None:
        """Stop following the session (spans still open are not reported)."""
        self._unsubscribe()

    def __enter__(self) -> SessionTracer:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()
