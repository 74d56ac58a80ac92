"""``agent-core export --otlp``: a stored session's spans reach a real OTLP/HTTP receiver on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import HTTPServer

import pytest
from otlp_receiver import serving

from effects.cli import main

from ._session import SESSION


@pytest.fixture
def receiver() -> Iterator[HTTPServer]:
    with serving() as server:
        yield server


def test_export_otlp_sends_the_spans_of_a_stored_session(
    db: str, receiver: HTTPServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{receiver.server_port}/v1/traces"
    code = main(["export", db, SESSION, "--otlp", url, "--model", "gpt-test", "--provider", "openai"])
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().err == f"sent 9 spans of {SESSION} to {url}\n"
    [(path, request)] = receiver.requests  # type: ignore[attr-defined]
    assert path == "/v1/traces"
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    assert [span.name for span in spans][-2:] == ["chat gpt-test", "invoke_agent agent-core"]
    attributes = {a.key: a.value for a in spans[-2].attributes}
    assert attributes["gen_ai.provider.name"].string_value == "openai"
    assert attributes["agent_core.replayed"].bool_value is True
    assert spans[-2].parent_span_id == spans[-1].span_id


def test_export_otlp_refuses_a_url_that_is_not_http(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", db, SESSION, "--otlp", "ftp://127.0.0.1:1/v1/traces"]) == 2
    assert "expects an http(s) URL" in capsys.readouterr().err
