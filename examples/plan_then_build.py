"""Plan, then build: what the agent may do depends on where it is, and deleting always needs a person.

A coding agent may only read files and propose a plan until a person approves
the plan (``propose_plan`` needs approval in ``planning``, and its success moves
the workflow to ``building``); then it may write files, and every delete waits
for approval. The workflow is data in ``session-started``, enforced by the
reducer: a call the current state does not offer is not run, and the model
reads why. A rule refuses writes to secrets files before they run.
Output includes: planning -> building at record
"""

import asyncio

from agent_core import (
    ALLOW,
    AgentConfig,
    AgentState,
    ProposedCall,
    Verdict,
    Workflow,
    WorkflowState,
    WorkflowTransition,
    register_rule,
    workflow_mermaid,
)
from effects import Agent, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

FILES = {"README.md": "# shop\n", "old.txt": "obsolete\n"}


@tool(idempotent=True)
def read_file(path: str) -> str:
    """Read a file of the project."""
    return FILES.get(path, f"(no file {path})")


@tool
def propose_plan(plan: str) -> str:
    """Propose the plan of the change; a person approves it before anything is written."""
    return f"plan accepted: {plan}"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file of the project."""
    FILES[path] = content
    return f"wrote {len(content)} characters to {path}"


@tool
def delete_file(path: str) -> str:
    """Delete a file of the project."""
    FILES.pop(path, None)
    return f"deleted {path}"


@register_rule("no-secrets")
def no_secrets(call: ProposedCall, state: AgentState) -> Verdict:
    """Writing a secrets file is refused; the model reads the reason and tries something else."""
    path = call.arguments.get("path", "") if isinstance(call.arguments, dict) else ""
    if call.name == "write_file" and path.endswith(".env"):
        return Verdict(kind="retry", reason="secrets files are not written by the agent")
    return ALLOW


WORKFLOW = Workflow(
    states=(
        WorkflowState(name="planning", tools=("read_file", "propose_plan"), approval=("propose_plan",)),
        WorkflowState(name="building", tools=("read_file", "write_file", "delete_file"), approval=("delete_file",)),
    ),
    initial="planning",
    transitions=(WorkflowTransition(source="planning", target="building", tool="propose_plan"),),
)

model = ScriptedModel(
    [
        call_tools(("read_file", {"path": "README.md"})),
        call_tools(("write_file", {"path": "README.md", "content": "# shop\nusage\n"})),  # not allowed yet
        call_tools(("propose_plan", {"plan": "add a usage section; remove old.txt"}, "plan")),
        call_tools(
            ("write_file", {"path": ".env", "content": "KEY=1"}),  # refused by the rule
            ("write_file", {"path": "README.md", "content": "# shop\nusage\n"}),
            ("delete_file", {"path": "old.txt"}, "delete"),
        ),
        say("The README has a usage section and old.txt is gone."),
    ]
)


async def main() -> None:
    config = AgentConfig(workflow=WORKFLOW, rules=("no-secrets",))
    agent = Agent(
        model,
        tools=[read_file, propose_plan, write_file, delete_file],
        config=config,
        clock=ManualClock(),
        ids=SequentialIds(),
    )
    async with agent.running() as session:
        session.send("Add a usage section to the README and remove old.txt.")
        await session.settled()
        print(
            f"[{session.state.workflow_state}] waiting for a person: {session.state.turn and session.state.turn.awaiting_ids}"
        )
        session.approve("plan")
        await session.settled()
        print(
            f"[{session.state.workflow_state}] waiting for a person: {session.state.turn and session.state.turn.awaiting_ids}"
        )
        session.approve("delete")
        await session.settled()
        state = session.state
    for call_id in state.tool_call_log:
        record = state.tool_calls[call_id]
        result = record.result
        text = getattr(result, "content", None) or getattr(result, "error", "")
        print(f"{record.name:<13} -> {text.strip()}")
    for move in state.audit:
        print(f"workflow: {move.source} -> {move.target} at record {move.step} ({move.trigger})")
    print("files:", sorted(FILES))
    print(workflow_mermaid(WORKFLOW), end="")


asyncio.run(main())
