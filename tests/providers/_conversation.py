"""A conversation built through the pure core, whose ``llm_context`` the adapter tests send.

Two earlier turns push the first message out of a window of 4 (so the
model is offered ``load_older_messages``); the open turn has the model's text
and two parallel tool calls, one succeeded and one failed.
"""

from __future__ import annotations

import agent_core as ac

GET_TIME = ac.ToolDefinition(
    name="get_time",
    description="The current time in a timezone.",
    parameters='{"type":"object","properties":{"timezone":{"type":"string"}},"required":["timezone"]}',
)
DELETE_FILE = ac.ToolDefinition(name="delete_file", description="Delete a file.", requires_approval=True)
SYSTEM = "You answer briefly."


def _answered_turn(at: int, question: str, reply: str) -> list[ac.AgentInput]:
    return [
        ac.UserMessageReceived(timestamp=at, message_id=f"u{at}", content=question),
        ac.LlmMessageStarted(timestamp=at + 1, message_id=f"a{at}"),
        ac.LlmMessageCompleted(timestamp=at + 2, message_id=f"a{at}", content=reply),
        ac.ReActObserved(timestamp=at + 3, called_llm_at=at, observation=ac.CompleteReAct()),
    ]


def conversation() -> ac.AgentState:
    """The state described in the module docstring, folded from inputs."""
    config = ac.AgentConfig(system_prompt=SYSTEM, initial_context_window=4)
    calls = {
        "call_paris": ac.ToolCallRequest(name="get_time", parameters='{"timezone":"Europe/Paris"}'),
        "call_mars": ac.ToolCallRequest(name="get_time", parameters='{"timezone":"Mars/Olympus"}'),
    }
    inputs: list[ac.AgentInput] = [
        ac.SessionStarted(timestamp=1, session_id="s", config=config, tools=(GET_TIME, DELETE_FILE)),
        *_answered_turn(10, "Hi!", "Hello."),
        *_answered_turn(20, "Who are you?", "An agent."),
        ac.UserMessageReceived(timestamp=30, message_id="u30", content="What time is it in Paris and on Mars?"),
        ac.LlmMessageStarted(timestamp=31, message_id="a31"),
        ac.LlmMessageCompleted(timestamp=32, message_id="a31", content="Let me check both."),
        ac.ReActObserved(timestamp=33, called_llm_at=30, observation=ac.ContinueReAct(tool_calls=calls)),
        ac.ToolCallStarted(timestamp=34, tool_call_id="call_paris"),
        ac.ToolCallStarted(timestamp=35, tool_call_id="call_mars"),
        ac.ToolCallCompleted(timestamp=36, tool_call_id="call_paris", result=ac.ToolSuccess(content="14:05")),
        ac.ToolCallCompleted(timestamp=37, tool_call_id="call_mars", result=ac.ToolFailure(error="unknown timezone")),
    ]
    return ac.replay(inputs)


def context() -> ac.LlmContext:
    """What the next model call of :func:`conversation` sends."""
    return ac.llm_context(conversation())


def first_question() -> ac.LlmContext:
    """A session's first model call: one user message, the two tools."""
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", tools=(GET_TIME, DELETE_FILE)),
            ac.UserMessageReceived(timestamp=2, message_id="u", content="What time is it in Paris?"),
        ]
    )
    return ac.llm_context(state)
