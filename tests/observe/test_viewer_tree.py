"""The viewer shows the tree of sessions an agent's tools started and opens any of them (Chromium, Playwright)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_core import ContextToolResult, LlmContext
from effects import Agent, ModelReply, SqliteStore, open_session
from effects.testing import ManualClock, ScriptedModel, call_tools, say

from ._browser import browser, screenshot, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def asking(*calls: str) -> ScriptedModel:
    """A model that calls ``ask`` once per name in ``calls`` (in parallel), then answers with the results."""

    def reply(context: LlmContext) -> ModelReply:
        found = [e.content for e in context.entries if isinstance(e, ContextToolResult)]
        if found or not calls:
            return say(" + ".join(found) or "leaf answer")
        return call_tools(*(("ask", {"task": name}, name) for name in calls))

    return ScriptedModel(reply)


async def test_the_roots_page_lists_its_tree_as_it_grows_and_opens_a_grandchild(tmp_path: Path) -> None:
    path = tmp_path / "tree.db"
    store, clock = SqliteStore(path), ManualClock()
    leaf = Agent(asking(), clock=clock)
    middle = Agent(asking("deep"), tools=[leaf.as_tool("ask", "Ask the leaf.")], clock=clock)
    tools = [middle.as_tool("ask", "Ask.")]

    async def turn(model: ScriptedModel) -> None:
        async with open_session(store, "root", model, tools=tools, clock=clock) as session:
            session.send("go")
            with anyio.fail_after(10):
                await session.turn_done()

    await turn(asking())  # a first turn that asks nobody: a session alone, no tree to show
    async with serving(SqliteStore(path)) as url, browser() as chromium:
        page = await chromium.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(f"{url}#/s/root")
        await page.wait_for_selector(".lane")
        assert await page.is_hidden("#tree")
        await turn(asking("one", "two"))  # the followed page sees new records, and the children they started
        await page.wait_for_selector("#tree li[data-session='root:two:deep']")
        listed = await page.eval_on_selector_all("#tree li", "items => items.map(i => i.dataset.session)")
        assert listed == ["root", "root:one", "root:one:deep", "root:two", "root:two:deep"]
        assert await page.text_content("#tree strong.current") == "root"  # the page's own session, not a link
        await screenshot(page, "viewer-tree.png")
        await page.click("#tree li[data-session='root:two:deep'] > a")
        await page.wait_for_selector("#tree strong.current:text('root:two:deep')")
        assert await page.text_content("#where") == "session root:two:deep"
        assert "completed" in (await page.text_content("#tree li[data-session='root:two:deep']") or "")
        await page.click("#tree li[data-session='root'] > a")  # and back up to the root
        await page.wait_for_selector("#tree strong.current:text('root')")
