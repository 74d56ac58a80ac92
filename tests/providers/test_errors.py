"""Provider failures become ModelErrors: retryable or not, with the server's hint, body and no API key."""

from __future__ import annotations

import json
import logging
import traceback

import pytest

from effects import ModelError
from effects.testing import HOLD, FakeProviderServer, Reply, error_reply, openai_stream, sse

from ._conversation import first_question
from ._providers import KEY, PROVIDERS, Provider, complete

pytestmark = pytest.mark.anyio

CASES = [
    # status, headers, error type, retryable, retry_after_ms
    (429, {"retry-after": "2"}, "rate_limit_error", True, 2000),
    (429, {"retry-after-ms": "1500", "retry-after": "2"}, "rate_limit_error", True, 1500),
    (408, {}, "timeout_error", True, None),
    (500, {}, "api_error", True, None),
    (503, {"retry-after": "0.25"}, "api_error", True, 250),
    (529, {}, "overloaded_error", True, None),
    (400, {}, "invalid_request_error", False, None),
    (401, {}, "authentication_error", False, None),
    (403, {}, "permission_error", False, None),
    (404, {}, "not_found_error", False, None),
    (422, {}, "invalid_request_error", False, None),
]


async def failure(provider: Provider, server: FakeProviderServer, **options: object) -> ModelError:
    with pytest.raises(ModelError) as info:
        await complete(provider.build(server, **options), first_question())
    return info.value


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
@pytest.mark.parametrize(("status", "headers", "kind", "retryable", "wait"), CASES)
async def test_status_errors_are_classified_and_keep_the_body(
    provider: Provider,
    server: FakeProviderServer,
    status: int,
    headers: dict[str, str],
    kind: str,
    retryable: bool,
    wait: int | None,
) -> None:
    reply = error_reply(status, f"failure {status}", kind=kind, headers=headers)
    server.enqueue(reply)
    error = await failure(provider, server)
    assert (error.retryable, error.retry_after_ms, error.status) == (retryable, wait, status)
    assert json.loads(error.body) == reply.body
    assert len(server.requests) == 1, "the SDK must not retry: retries belong to the reducer"


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_the_message_says_what_failed_and_what_to_do(provider: Provider, server: FakeProviderServer) -> None:
    server.enqueue(error_reply(429, "Rate limit reached.", kind="rate_limit_error", headers={"retry-after": "3"}))
    server.enqueue(error_reply(401, "Invalid API key.", kind="authentication_error"))
    rate_limited, unauthorized = await failure(provider, server), await failure(provider, server)
    origin = provider.origin(server)
    assert str(rate_limited) == (
        f"{origin} failed with HTTP 429: Rate limit reached. Retryable; the server asks to wait 3000 ms. "
        'Body: {"type":"error","error":{"message":"Rate limit reached.","type":"rate_limit_error"}}'
    )
    env = "ANTHROPIC_API_KEY" if provider.name == "anthropic" else "OPENAI_API_KEY"
    assert str(unauthorized) == (
        f"{origin} failed with HTTP 401: Invalid API key. "
        f"Not retryable: check the API key ({env} or api_key=...) and its permissions. "
        'Body: {"type":"error","error":{"message":"Invalid API key.","type":"authentication_error"}}'
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
@pytest.mark.parametrize("status", [400, 500])
async def test_a_context_length_error_is_not_retryable_whatever_its_status(
    provider: Provider, server: FakeProviderServer, status: int
) -> None:
    message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens."
    server.enqueue(error_reply(status, message, kind="invalid_request_error"))
    error = await failure(provider, server)
    assert not error.retryable
    assert "longer than the model's context window" in str(error)


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_body_that_is_not_json_is_kept_as_text(provider: Provider, server: FakeProviderServer) -> None:
    server.enqueue(Reply(status=502, body="<html>502 Bad Gateway</html>"))
    error = await failure(provider, server)
    assert (error.retryable, error.status, error.body) == (True, 502, "<html>502 Bad Gateway</html>")


async def test_an_openai_error_inside_the_stream_is_retryable_after_the_text_it_sent(
    server: FakeProviderServer,
) -> None:
    failure_event = sse(
        {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
    )
    server.enqueue(Reply.stream([*openai_stream(["Partial"])[:2], failure_event]))
    deltas: list[str] = []
    with pytest.raises(ModelError) as info:
        await complete(PROVIDERS[0].build(server), first_question(), deltas.append)
    assert deltas == ["Partial"]
    assert info.value.retryable
    assert str(info.value) == (
        f"{PROVIDERS[0].origin(server)} failed mid-stream: The server had an error while processing your request. "
        'Retryable. Body: {"message":"The server had an error while processing your request.","type":"server_error"}'
    )


@pytest.mark.parametrize(("kind", "retryable"), [("overloaded_error", True), ("invalid_request_error", False)])
async def test_an_anthropic_error_event_is_classified_by_its_type(
    server: FakeProviderServer, kind: str, retryable: bool
) -> None:
    event = sse({"type": "error", "error": {"type": kind, "message": "Overloaded"}}, "error")
    server.enqueue(Reply.stream([event]))
    error = await failure(PROVIDERS[1], server)
    assert error.retryable is retryable
    assert json.loads(error.body) == {"type": "error", "error": {"type": kind, "message": "Overloaded"}}


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_refused_connection_is_retryable(provider: Provider) -> None:
    stopped = FakeProviderServer()  # its port was bound, then closed: nobody listens there
    stopped.close()
    with pytest.raises(ModelError) as info:
        await complete(provider.build(stopped), first_question())
    assert info.value.retryable
    assert str(info.value) == (
        f"{provider.origin(stopped)} could not connect or was cut off. "
        "Retryable; check the base URL and that the server runs."
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_timeout_is_retryable(provider: Provider, server: FakeProviderServer) -> None:
    server.enqueue(Reply.stream([HOLD]))
    error = await failure(provider, server, timeout=0.2)
    assert error.retryable
    assert (
        str(error) == f"{provider.origin(server)} timed out. Retryable; pass a larger timeout=... if the model is slow."
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_the_api_key_never_appears_in_errors_bodies_or_logs(
    provider: Provider, server: FakeProviderServer, caplog: pytest.LogCaptureFixture
) -> None:
    echoed = f"Incorrect API key provided: {KEY}."
    server.enqueue(error_reply(401, echoed, kind="authentication_error"))
    server.enqueue(Reply.stream([sse({"error": {"message": echoed}, "type": "error"}, "error")]))
    caplog.set_level(logging.DEBUG)
    errors = [await failure(provider, server), await failure(provider, server)]
    adapter = provider.build(server)
    await adapter.aclose()
    for error in errors:
        seen = [str(error), error.body, "".join(traceback.format_exception(error)), repr(adapter)]
        assert all(KEY not in text for text in seen), seen
        assert "Incorrect API key provided: ***." in error.body
    assert all(KEY not in record.getMessage() for record in caplog.records)
