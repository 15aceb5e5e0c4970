"""The DeepAgents bridge: files -> workspace.file events, todos -> session state,
subagents kept out of the answer, approvals through interrupt_on."""

from __future__ import annotations

import json
from typing import Any

from conftest import REPO, approval, close, errors, make_runner, natives, of, run, text, turn

from agentengine_adapters.deepagents_bridge import DeepAgentsRunner

AGENT = """
from deepagents import create_deep_agent
from langchain.agents.middleware import TodoListMiddleware
from agentengine_adapters.models import chat_model

agent = create_deep_agent(model=chat_model(), middleware=[TodoListMiddleware()], INTERRUPT)
"""


def deep(project: Any, interrupt: str = "") -> Any:
    return project(AGENT.replace("INTERRUPT", interrupt), framework="deepagents", variable="agent")


def test_files_become_workspace_events_and_todos_session_state(project: Any) -> None:
    settings = deep(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        assert isinstance(runner, DeepAgentsRunner)
        try:
            return await turn(runner, "Research agent runtimes: write the todos and write a report file")
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events)
    files = natives(events, "workspace.file")
    assert len(files) == 1
    assert files[0]["path"] == "/research-agent-runtimes.md"
    assert files[0]["content"] == "Notes on Research agent runtimes.\n"
    assert files[0]["encoding"] == "utf-8" and files[0]["deleted"] is False
    deltas = [json.loads(d.delta_json) for d in of(events, "state_delta")]
    assert deltas == [{"todos": [{"content": "Notes on Research agent runtimes.\n", "status": "pending"}]}]
    calls = {c.name: c.call_id for c in of(events, "tool_call")}
    assert {r.call_id for r in of(events, "tool_result")} == {calls["write_file"], calls["write_todos"]}
    assert text(events).startswith("Done.")


def test_subagent_output_is_native_not_answer_text(project: Any) -> None:
    settings = deep(project)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "delegate a task: summarize LangGraph")
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events)
    sub = natives(events, "subagent.message")
    (task,) = of(events, "tool_call")
    description = json.loads(task.arguments)["description"]
    assert task.name == "task" and sub and sub[0]["text"] == f"You said: {description}"
    assert all(s["ns"][0].startswith("tools:") for s in sub)
    # The answer is the main agent's only: it reports the task result, the subagent's
    # own tokens never stream as answer text.
    assert text(events) == f"Done. task returned: You said: {description}."


def test_interrupt_on_write_file_asks_then_writes(project: Any) -> None:
    settings = deep(project, 'interrupt_on={"write_file": True}')

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, "write a file about cats")
            second = await turn(runner, approval(of(first, "approval_request")[0]), resume=True)
            return first, second
        finally:
            await close(runner)

    first, second = run(go)
    (req,) = of(first, "approval_request")
    assert req.name == "write_file" and req.call_id == of(first, "tool_call")[0].call_id
    assert not natives(first, "workspace.file")
    assert [f["path"] for f in natives(second, "workspace.file")] == ["/cats.md"]
    assert of(second, "tool_result")[0].call_id == req.call_id


def test_deepagents_example_runs_offline(project: Any) -> None:
    root = REPO / "examples" / "deepagents-research"
    files = {p.name: p.read_text() for p in root.glob("*.py") if p.name != "agent.py"}
    settings = project((root / "agent.py").read_text(), framework="deepagents", variable="agent", files=files)

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "write_todos for a report on agent runtimes")
        finally:
            await close(runner)

    events = run(go)
    assert [c.name for c in of(events, "tool_call")] == ["write_todos"]
    assert json.loads(of(events, "state_delta")[0].delta_json)["todos"]
