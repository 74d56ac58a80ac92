"""Hostile text in every field of a session: the viewer's page (served, and written by ``inspect --html``) always
renders it as text and never runs it.

Each example writes one session whose every text (session id, system prompt, tool names, descriptions and
schemas, message ids and contents, tool-call ids, names and arguments, results, errors, reasons) is drawn from
fragments that break pages: ``<!--<script>``, ``</script>``, markup with handlers, U+2028/U+2029, entities.
Every payload that could run sets ``window.pwned``; the test checks the page shows each text exactly, and that
``window.pwned`` is never set and no dialog opens, after loading and after opening a record's every tab.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Page, sync_playwright

from agent_core import (
    AgentConfig,
    AgentInput,
    ContinueReAct,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallRequest,
    ToolCallStarted,
    ToolDefinition,
    ToolFailure,
    ToolSuccess,
    Usage,
    UserMessageReceived,
)
from effects import MemoryStore, SessionJournal, create_app, write_html

from ._browser import ARGS, CHROMIUM
from ._session import START

pytestmark = pytest.mark.slow

RUN = "window.pwned=1"
FRAGMENTS = [
    "<!--<script>",
    "<!--",
    "-->",
    "<script>",
    "</script>",
    "</SCRIPT >",
    f"<script>{RUN}</script>",
    f"</script><script>{RUN}</script>",
    f"<img src=x onerror={RUN}>",
    f"<svg onload={RUN}>",
    f'"><img src=x onerror="{RUN}">',
    f"javascript:{RUN}",
    f"${{{RUN}}}",
    "\u2028",
    "\u2029",
    "&lt;",
    "&#60;",
    "&amp;",
    "]]>",
    "</style><style>*{display:none}</style>",
    "</title>",
    "\\u003c/script>",
    '"',
    "'",
    "`",
    "%2F",
    "#/s/",
    "\x00",
]
hostile = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(min_size=1, max_size=3)), min_size=1, max_size=4).map(
    "".join
)


def inputs(t: list[str]) -> list[AgentInput]:
    """A session of two turns with ``t[0]``... in every text: the first with a tool call that succeeds, one that
    is denied and a model call that fails; the second with a failing tool call, then cancelled."""
    sid, tool, other = t[0] + "s", t[1] + "t", t[1] + "u"
    schema = json.dumps({"type": "object", "description": t[2]})
    usage = Usage(input_tokens=1, output_tokens=1)
    ask = ToolCallRequest(name=tool, parameters=json.dumps({"q": t[3], t[4]: [t[5]]}))
    return [
        SessionStarted(
            timestamp=START,
            session_id=sid,
            config=AgentConfig(system_prompt=t[6]),
            tools=(
                ToolDefinition(name=tool, description=t[7], parameters=schema),
                ToolDefinition(name=other, description=t[2], requires_approval=True),
            ),
        ),
        UserMessageReceived(timestamp=START + 1, message_id=t[3] + "m1", content=t[4]),
        LlmMessageStarted(timestamp=START + 2, message_id=t[5] + "m2"),
        LlmMessageCompleted(timestamp=START + 3, message_id=t[5] + "m2", content=t[6]),
        ReActObserved(
            timestamp=START + 4,
            called_llm_at=START + 1,
            observation=ContinueReAct(tool_calls={t[7] + "c1": ask, t[0] + "c2": ToolCallRequest(name=other)}),
            usage=usage,
        ),
        ToolCallStarted(timestamp=START + 5, tool_call_id=t[7] + "c1"),
        ToolCallCompleted(timestamp=START + 6, tool_call_id=t[7] + "c1", result=ToolSuccess(content=t[1])),
        ToolCallDenied(timestamp=START + 7, tool_call_id=t[0] + "c2", reason=t[2]),
        LlmCallFailed(timestamp=START + 8, error=t[3], retryable=False),
        UserMessageReceived(timestamp=START + 9, message_id=t[4] + "m3", content=t[5]),
        ReActObserved(
            timestamp=START + 10,
            called_llm_at=START + 9,
            observation=ContinueReAct(tool_calls={t[6] + "c3": ToolCallRequest(name=tool, parameters=t[7])}),
            usage=usage,
        ),
        ToolCallStarted(timestamp=START + 11, tool_call_id=t[6] + "c3"),
        ToolCallCompleted(timestamp=START + 12, tool_call_id=t[6] + "c3", result=ToolFailure(error=t[0])),
        ReActCancelled(timestamp=START + 13, reason=t[1]),
    ]


class Viewer:
    """A browser page, and the viewer serving ``store`` in a thread of its own."""

    def __init__(self, page: Page, store: MemoryStore, port: int) -> None:
        self.page, self.store, self.port = page, store, port
        self.dialogs: list[str] = []
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))


@pytest.fixture(scope="module")
def viewer() -> Iterator[Viewer]:
    store = MemoryStore()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(create_app(store), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: server.run(sockets=[sock]), daemon=True)
    thread.start()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield Viewer(browser.new_page(), store, sock.getsockname()[1])
        finally:
            browser.close()
            server.should_exit = True
            thread.join()


def shows_exactly(viewer: Viewer, session: list[AgentInput], texts: list[str]) -> None:
    """The page of the session shows its id, its records, its conversation's texts exactly, and ran nothing."""
    page = viewer.page
    sid = texts[0] + "s"
    page.wait_for_selector(f"tr.record[data-seq='{len(session)}']")
    assert page.eval_on_selector("#main h1", "h => h.firstChild.textContent") == sid
    assert page.eval_on_selector_all("tr.record", "rows => rows.length") == len(session)
    shown = page.eval_on_selector_all(".entry pre", "pres => pres.map(p => p.textContent)")
    assert texts[4] in shown and texts[5] in shown and texts[1] in shown  # user messages, a result
    for seq in (5, 12):  # the tool calls and their results, the denial, the failure
        page.click(f"tr.record[data-seq='{seq}']")
        page.wait_for_selector(f"#detail h2:text('Record {seq}:')")
        for tab in ("state", "diff", "context", "input"):
            page.click(f"button[data-tab='{tab}']")
            page.wait_for_selector(f"button.on[data-tab='{tab}']")
    page.click("#verify")
    page.wait_for_selector("#verify-result.ok")
    assert page.evaluate("() => window.pwned") is None and viewer.dialogs == []
    assert page.query_selector("#error") is None


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(hostile, min_size=8, max_size=8))
def test_hostile_text_in_every_field_is_shown_and_never_run(
    viewer: Viewer, tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    session = inputs(texts)
    sid = texts[0] + "s"
    if any(s.session_id == sid for s in viewer.store.sessions()):
        return  # drawn before (hypothesis replays examples)
    SessionJournal(viewer.store, sid).append(session)
    html = tmp_path_factory.mktemp("page") / "session.html"
    write_html(viewer.store, sid, html)
    data: Any = html.read_bytes().split(b'id="agent-core-data">', 1)[1].split(b"</script>", 1)[0]
    assert not any(c in data for c in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()))

    viewer.page.goto(html.as_uri())
    shows_exactly(viewer, session, texts)
    viewer.page.goto(f"http://127.0.0.1:{viewer.port}/")
    viewer.page.wait_for_selector("tr.session")
    viewer.page.evaluate(  # the session list's link to it
        "sid => [...document.querySelectorAll('tr.session')].find(r => r.dataset.session === sid)"
        ".querySelector('a').click()",
        sid,
    )
    shows_exactly(viewer, session, texts)
