"""The session viewer in a real browser: Debian's Chromium driven by Playwright (never a downloaded browser).

The app and a running session share one event loop: an approval clicked in the
page goes through the app into the log, and the session, following its store,
continues. Screenshots are kept in ``test-artifacts/`` (or ``$AGENT_CORE_ARTIFACTS``).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_core import AgentConfig, tag_of
from effects import SharedStore, SqliteStore, StateUpdated, follow_store, open_session
from effects.cli import main
from effects.testing import ManualClock, SequentialIds

from ._browser import browser, screenshot, serving
from ._session import CLOCKS, SESSION, START, TOOLS, record, script, until_awaiting

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_sessions_timeline_and_an_approval_clicked_in_the_browser(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    running, viewer = SharedStore(SqliteStore(path, synchronous="NORMAL")), SqliteStore(path, synchronous="NORMAL")
    await record(running, "finished")
    clock = ManualClock(START)
    CLOCKS.append(clock)
    config = AgentConfig(system_prompt="You are terse.", max_tool_calls=8)
    async with (
        open_session(
            running, SESSION, script(), tools=TOOLS, config=config, clock=clock, ids=SequentialIds()
        ) as session,
        follow_store(running, session, interval=0.05),
        serving(viewer) as url,
        browser() as chromium,
    ):
        await until_awaiting(session, clock)
        page = await chromium.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(url)
        await page.wait_for_selector("tr.session")
        listed = await page.eval_on_selector_all("tr.session", "rows => rows.map(r => r.dataset.session)")
        assert listed == ["finished", SESSION]
        await page.click(f"tr.session[data-session='{SESSION}'] a")
        await page.wait_for_selector(".lane")
        lanes = await page.eval_on_selector_all(
            ".lane", "lanes => lanes.map(l => [l.dataset.key, l.dataset.kind, l.dataset.outcome])"
        )
        assert lanes[:7] == [
            ["turn:1", "turn", "running"],
            ["call-llm:1:0:0", "model", "failed"],
            ["wait-until:retry:1:1767225601000", "wait", "completed"],
            ["call-llm:1:0:1", "model", "completed"],
            ["call-tool:c1", "tool", "completed"],
            ["call-tool:c2", "tool", "failed"],
            ["call-llm:1:1:0", "model", "completed"],
        ]
        c1 = await page.eval_on_selector(
            ".lane[data-key='call-tool:c1'] .bar", "b => b.getBoundingClientRect().toJSON()"
        )
        c2 = await page.eval_on_selector(
            ".lane[data-key='call-tool:c2'] .bar", "b => b.getBoundingClientRect().toJSON()"
        )
        assert c1["x"] == c2["x"] and c2["x"] + c2["width"] > c1["x"] + c1["width"]  # parallel calls overlap
        assert await page.text_content("#phase") == "awaiting-approval"
        assert "tool calls" in (await page.text_content("#budgets") or "")
        await page.click(".record[data-seq='5']")
        await page.wait_for_selector("#detail h2:text('Record 5:')")
        await page.click("button[data-tab='diff']")
        await page.wait_for_selector("#diff")
        assert "turn.open_call_ids" in (await page.text_content("#diff") or "")
        await page.click(".record[data-seq='4']")
        await page.wait_for_selector("#detail h2:text('Record 4:')")
        await page.click("button[data-tab='context']")
        await page.wait_for_selector(".context-message")
        assert "user: Look up otel and mail ops." in (await page.text_content("#detail") or "")
        await screenshot(page, "viewer-awaiting-approval.png")

        finished = anyio.Event()
        session.subscribe(lambda e: finished.set() if isinstance(e, StateUpdated) and e.state.last_outcome else None)
        await page.click(".approval[data-call='c3'] button.approve")
        with anyio.fail_after(15):
            await finished.wait()
        assert session.state.last_outcome is not None and session.state.last_outcome.kind == "completed"
        await page.wait_for_selector("#phase:text-is('idle')")  # the page follows the live session
        await page.click("#verify")
        await page.wait_for_selector("#verify-result.ok")
        await screenshot(page, "viewer-completed.png")
        await page.click(".record[data-seq='10']")
        await page.wait_for_selector("#detail h2:text('Record 10:')")
        await page.click("#fork")  # fork here: a new session from the first 10 records
        await page.wait_for_selector(f"#where:text-is('session {SESSION}@10')")
        await page.wait_for_selector(".approval[data-call='c3']")  # the fork waits for the decision again
    tags = [tag_of(r.decode()) for r in viewer.read(SESSION)]
    assert "tool-call-approved" in tags and tags[-1] == "re-act-observed"
    assert viewer.session(f"{SESSION}@10").length == 10
    running.close()
    viewer.close()


async def test_inspect_html_is_one_self_contained_page(db: str, tmp_path: Path) -> None:
    html = tmp_path / "demo.html"
    assert main(["inspect", db, SESSION, "--html", str(html)]) == 0
    text = html.read_text()
    assert "<script src=" not in text and "stylesheet" not in text and "http://" not in text
    async with browser() as chromium:
        page = await chromium.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        await page.goto(html.as_uri())
        await page.wait_for_selector(".lane")
        assert await page.eval_on_selector_all(".lane", "ls => ls.length") == 9
        await page.click(".record[data-seq='11']")
        await page.wait_for_selector("#detail h2:text('Record 11:')")
        assert "tool-call-approved" in (await page.text_content("#detail h2") or "")
        await page.click("#verify")
        assert (await page.text_content("#verify-result") or "").startswith("verified: 16 records")
        assert requests == [html.as_uri()]  # nothing fetched: no CDN, no network
