"""The same agent workload through agent-core, LangGraph and pydantic-ai, side by side.

Run ``python -m benchmarks.peers --help``. One module per framework
(``agent_core_side``, ``langgraph_side`` with ``langgraph_model``,
``pydantic_ai_side``) implements :mod:`.workload` through that framework's
public interfaces; :mod:`.measure` times them, :mod:`.report` and
:mod:`.tables` print the results and :mod:`.document` writes the JSON.
Needs the ``bench`` extra.
"""
