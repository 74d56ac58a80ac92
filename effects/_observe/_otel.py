"""Sending :class:`SpanData` to OpenTelemetry: as SDK spans with their own ids and times, through any exporter.

Needs the ``otel`` extra (a missing one raises ``MissingExtra`` with the command that installs it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._extras import missing
from ._spans import SpanData

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter

SCOPE = "agent-core"
"""The instrumentation scope of every span."""


def _otel() -> Any:
    try:
        from opentelemetry.sdk import trace  # noqa: F401
    except ImportError as error:
        raise missing("OpenTelemetry export", "otel", error) from None
    import opentelemetry.sdk.trace as sdk_trace

    return sdk_trace


def to_otel(span: SpanData, resource: Any = None) -> ReadableSpan:
    """``span`` as an SDK ``ReadableSpan`` (ids and times kept), for ``exporter.export([...])``."""
    sdk_trace = _otel()
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    flags = TraceFlags(TraceFlags.SAMPLED)
    context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=flags)
    parent = (
        None
        if span.parent_id is None
        else SpanContext(span.trace_id, span.parent_id, is_remote=False, trace_flags=flags)
    )
    events = [sdk_trace.Event(e.name, e.attributes, timestamp=e.timestamp * 1_000_000) for e in span.events]
    status = Status(StatusCode.ERROR, span.error) if span.error else Status(StatusCode.UNSET)
    span_out: ReadableSpan = sdk_trace.ReadableSpan(
        name=span.name,
        context=context,
        parent=parent,
        resource=resource if resource is not None else Resource.create({"service.name": "agent-core"}),
        attributes=span.attributes,
        events=events,
        kind=SpanKind.CLIENT if span.kind == "client" else SpanKind.INTERNAL,
        status=status,
        start_time=span.start_ms * 1_000_000,
        end_time=span.end_ms * 1_000_000,
        instrumentation_scope=InstrumentationScope(SCOPE),
    )
    return span_out


def export_spans(spans: Iterable[SpanData], exporter: SpanExporter, resource: Any = None) -> int:
    """Export ``spans`` through ``exporter`` (any OpenTelemetry ``SpanExporter``) in one batch; returns how many.

    Raises ``RuntimeError`` naming the exporter when it reports a failure.
    """
    batch = [to_otel(span, resource) for span in spans]
    if not batch:
        return 0
    from opentelemetry.sdk.trace.export import SpanExportResult

    result = exporter.export(batch)
    if result is not SpanExportResult.SUCCESS:
        raise RuntimeError(
            f"{type(exporter).__name__} refused {len(batch)} spans (result {result.name}); "
            "check that the collector is running and reachable"
        )
    return len(batch)
