"""Seeing inside a session: OpenTelemetry GenAI spans (live and from a stored log), metrics, conversations.

Import the public names from ``effects``.
"""

# For the viewer (not public names):
from ._attributes import COST_ATTRIBUTE
from ._attributes import context_messages as context_messages
from ._conventions import Conventions, span_id_of, trace_id_of
from ._conversation import ConversationEntry, conversation
from ._conversation import entries_of as entries_of
from ._live import SessionTracer
from ._messages import messages_in_order
from ._messages import messages_newest_first as messages_newest_first
from ._metrics import Latency, SessionStats, ToolStats, TurnStats, session_stats
from ._metrics import PhaseClock as PhaseClock
from ._metrics import stats_of as stats_of
from ._otel import export_spans, to_otel
from ._replayed import fold_steps as fold_steps
from ._replayed import session_spans
from ._spans import SpanData, SpanEvent, SpanProjection

__all__ = [
    "COST_ATTRIBUTE",
    "Conventions",
    "ConversationEntry",
    "Latency",
    "SessionStats",
    "SessionTracer",
    "SpanData",
    "SpanEvent",
    "SpanProjection",
    "ToolStats",
    "TurnStats",
    "conversation",
    "export_spans",
    "messages_in_order",
    "session_spans",
    "session_stats",
    "span_id_of",
    "to_otel",
    "trace_id_of",
]
