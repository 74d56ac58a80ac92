"""The workload's model and tools through langchain-core's public interfaces, for the LangGraph forms.

``FakeChatModel`` derives from ``BaseChatModel`` and binds tools the way
provider models do (``bind_tools`` converts them to OpenAI tool schemas and
binds them to the call). It implements both ``_generate`` and
``_agenerate``, so neither drive mode pays for a worker thread the other
does not. Tools are ``StructuredTool``s: plain functions for ``invoke``,
coroutines for ``ainvoke``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

from .workload import TOOL_DESCRIPTIONS, TOOL_NAMES, Tally
from .workload import next_step as decide
from .workload import tool_result as result_of

Mode = Literal["sync", "async"]
"""``sync``: ``graph.invoke`` with plain-function tools; ``async``: ``graph.ainvoke`` with coroutine tools."""


class FakeChatModel(BaseChatModel):
    """A chat model answering from the turn's question and the tool results since it."""

    _tally: Tally = PrivateAttr(default_factory=Tally)

    def __init__(self, tally: Tally, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tally = tally

    @property
    def _llm_type(self) -> str:
        return "peers-fake"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        """Bind the tools' OpenAI schemas to every call, as provider chat models do."""
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        self._tally.model_calls += 1
        results: list[str] = []
        asked = ""
        for message in reversed(messages):
            if isinstance(message, ToolMessage):
                results.append(str(message.content))
            elif isinstance(message, HumanMessage):
                asked = str(message.content)
                break
        step = decide(asked, results)
        usage = UsageMetadata(input_tokens=100, output_tokens=20, total_tokens=120)
        if isinstance(step, str):
            reply = AIMessage(content=step, usage_metadata=usage)
        else:
            calls = [ToolCall(name=c.name, args={"query": c.query}, id=c.id, type="tool_call") for c in step]
            reply = AIMessage(content="", tool_calls=calls, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def make_tools(tally: Tally, mode: Mode) -> list[BaseTool]:
    """The three tools, counting their calls: plain functions (``sync``) or coroutines (``async``)."""

    def make(name: str) -> BaseTool:
        def run(query: str) -> str:
            tally.tool_calls += 1
            return result_of(name, query)

        async def arun(query: str) -> str:
            return run(query)

        if mode == "sync":
            return StructuredTool.from_function(func=run, name=name, description=TOOL_DESCRIPTIONS[name])
        return StructuredTool.from_function(coroutine=arun, name=name, description=TOOL_DESCRIPTIONS[name])

    return [make(name) for name in TOOL_NAMES]
