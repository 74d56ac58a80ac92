"""The chat asks a tool's questions at the prompt (an MCP server's ``input_required``) instead of an approval."""

from __future__ import annotations

import json

import pytest

from effects.cli._chat_terminal import _answers

QUESTION = json.dumps({"seat": {"method": "elicitation/create", "params": {"message": "Window or aisle?"}}})


def test_an_answer_is_json_accepted_and_an_empty_line_declines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = iter(["window", '{"seat": "window"}'])
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))
    assert _answers("book", QUESTION) == {"seat": {"action": "accept", "content": {"seat": "window"}}}
    shown = capsys.readouterr().out
    assert "book asks: Window or aisle?" in shown and "[not JSON: " in shown

    monkeypatch.setattr("builtins.input", lambda prompt: "")
    assert _answers("book", QUESTION) == {"seat": {"action": "decline"}}
