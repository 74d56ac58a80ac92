"""GenAI spans from a stored log and from a running session, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agent_core import Usage
from effects import (
    Conventions,
    MemoryStore,
    SessionTracer,
    export_spans,
    open_session,
    session_spans,
    span_id_of,
    trace_id_of,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds, say

from ._session import CLOCKS, SESSION, START, TOOLS, recorded, script, until_awaiting

NAMES = [
    "chat gpt-test",  # failed, retried
    "wait retry",
    "chat gpt-test",
    "execute_tool lookup",
    "execute_tool flaky",
    "chat gpt-test",
    "execute_tool send_mail",
    "chat gpt-test",
    "invoke_agent support",
]
CONVENTIONS = Conventions(agent_name="support", provider="openai", model="gpt-test")


def exported(conventions: Conventions = CONVENTIONS, store: MemoryStore | None = None) -> list[ReadableSpan]:
    if store is None:
        store = MemoryStore()
        recorded(store)
    exporter = InMemorySpanExporter()
    export_spans(session_spans(store, SESSION, conventions), exporter)
    return list(exporter.get_finished_spans())


def test_a_stored_log_gives_one_span_per_turn_model_call_and_tool_call_with_parents() -> None:
    spans = exported()
    assert [s.name for s in spans] == NAMES
    turn = spans[-1]
    assert turn.kind is SpanKind.INTERNAL and turn.parent is None
    assert turn.context.span_id == span_id_of(SESSION, "turn:1")
    assert {s.context.trace_id for s in spans} == {trace_id_of(SESSION)}
    assert all(s.parent is not None and s.parent.span_id == turn.context.span_id for s in spans[:-1])
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.agent.name"] == "support"
    assert turn.attributes["agent_core.turn.outcome"] == "completed"
    assert [e.name for e in turn.events][:3] == ["user-message-received", "llm-call-failed", "timer-fired"]


def test_chat_spans_carry_model_usage_and_finish_reasons() -> None:
    spans = exported()
    failed, answered = spans[0], spans[2]
    assert failed.kind is SpanKind.CLIENT
    assert failed.status.status_code is StatusCode.ERROR and failed.status.description == "the model is overloaded"
    assert failed.attributes["error.type"] == "llm_error"
    attributes = answered.attributes
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == "gpt-test"
    assert attributes["gen_ai.conversation.id"] == SESSION
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attributes["gen_ai.usage.input_tokens"] > 0 and attributes["gen_ai.usage.output_tokens"] > 0
    assert attributes["agent_core.llm.attempt"] == 1
    assert spans[-2].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert "gen_ai.input.messages" not in attributes  # content only when opted in


def test_chat_spans_carry_the_cache_and_reasoning_breakdowns_when_the_provider_reports_them() -> None:
    store = MemoryStore()
    usage = Usage(
        input_tokens=900, output_tokens=70, cache_read_tokens=600, cache_write_tokens=200, reasoning_tokens=50
    )
    model = ScriptedModel([say("Cached.", usage=usage), say("Plain.", usage=Usage(input_tokens=9, output_tokens=2))])

    async def run() -> None:
        async with open_session(store, SESSION, model, clock=ManualClock(START), ids=SequentialIds()) as session:
            for question in ("Hi?", "Again?"):
                session.send(question)
                await session.settled()

    anyio.run(run)
    cached, plain = [s.attributes for s in exported(store=store) if s.name.startswith("chat")]
    assert {k: v for k, v in cached.items() if k.startswith("gen_ai.usage.")} == {
        "gen_ai.usage.input_tokens": 900,
        "gen_ai.usage.output_tokens": 70,
        "gen_ai.usage.cache_read.input_tokens": 600,
        "gen_ai.usage.cache_creation.input_tokens": 200,
        "gen_ai.usage.reasoning.output_tokens": 50,
    }
    assert {k for k in plain if k.startswith("gen_ai.usage.")} == {
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
    }


def test_tool_spans_carry_name_call_id_outcome_and_log_positions() -> None:
    spans = {s.name: s for s in exported()}
    ok, broken = spans["execute_tool lookup"], spans["execute_tool flaky"]
    assert ok.attributes["gen_ai.tool.name"] == "lookup"
    assert ok.attributes["gen_ai.tool.call.id"] == "c1"
    assert ok.attributes["agent_core.effect.outcome"] == "completed"
    assert (ok.attributes["agent_core.log.seq"], ok.attributes["agent_core.log.seq_end"]) == (5, 8)
    assert broken.status.status_code is StatusCode.ERROR
    assert broken.attributes["error.type"] == "error"
    assert "the backend is down" in (broken.status.description or "")
    assert all(s.attributes["agent_core.replayed"] is True for s in spans.values())


def test_semconv_opt_in_drops_the_old_attribute_and_content_is_recorded_only_when_asked() -> None:
    default = Conventions.from_environment({}, provider="openai")
    latest = Conventions.from_environment(
        {"OTEL_SEMCONV_STABILITY_OPT_IN": "http,gen_ai_latest_experimental"}, provider="openai"
    )
    with_content = Conventions.from_environment({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert exported(default)[2].attributes["gen_ai.system"] == "openai"
    assert "gen_ai.system" not in exported(latest)[2].attributes
    spans = exported(with_content)
    assert '"content": "Look up otel and mail ops."' in spans[2].attributes["gen_ai.input.messages"]
    assert spans[3].attributes["gen_ai.tool.call.arguments"] == '{"q":"otel"}'
    assert spans[2].name == "chat"  # no model given


def live(store: MemoryStore, exporter: InMemorySpanExporter, *, approve: bool) -> None:
    async def run() -> None:
        clock = ManualClock(START + 10_000)
        CLOCKS.append(clock)
        model = ScriptedModel([say("Looked it up and mailed ops.")]) if approve else script()
        async with open_session(store, SESSION, model, tools=TOOLS, clock=clock, ids=SequentialIds()) as session:
            with SessionTracer(session, SimpleSpanProcessor(exporter), CONVENTIONS):
                if approve:
                    session.approve("c3")
                else:
                    await until_awaiting(session, clock)
                await session.settled()

    anyio.run(run)


def test_a_live_session_reports_the_same_spans_as_its_log_and_a_resume_continues_the_trace() -> None:
    store, first, second = MemoryStore(), InMemorySpanExporter(), InMemorySpanExporter()
    live(store, first, approve=False)  # stops while the mail waits for approval
    live(store, second, approve=True)  # a new process resumes and approves
    after_the_fact = exported(store=store)
    live_spans = [*first.get_finished_spans(), *second.get_finished_spans()]
    assert [s.name for s in live_spans] == NAMES
    assert [s.context.span_id for s in live_spans] == [s.context.span_id for s in after_the_fact]
    assert [s.parent.span_id if s.parent else None for s in live_spans] == [
        s.parent.span_id if s.parent else None for s in after_the_fact
    ]
    assert [s.name for s in second.get_finished_spans()] == NAMES[-3:]
    assert all("agent_core.replayed" not in s.attributes for s in live_spans)


def test_only_a_live_run_reports_effects_as_started_here() -> None:
    store, exporter = MemoryStore(), InMemorySpanExporter()
    live(store, exporter, approve=False)
    started = [
        s.name for s in exporter.get_finished_spans() if "agent_core.effect.started" in {e.name for e in s.events}
    ]
    assert started == [*NAMES[:5], "chat gpt-test"]
    replayed = exported()
    assert not any(e.name == "agent_core.effect.started" for s in replayed for e in s.events)


def test_a_failing_exporter_is_reported() -> None:
    exporter = InMemorySpanExporter()
    exporter.shutdown()
    store = MemoryStore()
    recorded(store)
    with pytest.raises(RuntimeError, match="InMemorySpanExporter refused 9 spans"):
        export_spans(session_spans(store, SESSION), exporter)
