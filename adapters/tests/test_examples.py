"""The examples, offline, through the bridges (the Go e2e tests run them under the host)."""

from __future__ import annotations

import json
from typing import Any

from conftest import REPO, approval, close, errors, make_runner, of, run, text, turn


def example(project: Any, name: str, framework: str, variable: str) -> Any:
    root = REPO / "examples" / name
    # The example's own modules come along (e.g. its offline model).
    files = {p.name: p.read_text() for p in root.glob("*.py") if p.name != "agent.py"}
    return project((root / "agent.py").read_text(), framework=framework, variable=variable, files=files)


def test_langgraph_chat_approval_approve_and_reject(project: Any) -> None:
    settings = example(project, "langgraph-chat", "langgraph", "graph")

    async def go() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            ask = await turn(runner, "send an email to bob about the launch", session="a")
            yes = await turn(runner, approval(of(ask, "approval_request")[0]), resume=True, session="a")
            ask2 = await turn(runner, "send an email to carol about the budget", session="b")
            no = await turn(runner, approval(of(ask2, "approval_request")[0], False, "not yet"), resume=True, session="b")
            return ask, yes, ask2, no
        finally:
            await close(runner)

    ask, yes, ask2, no = run(go)
    (req,) = of(ask, "approval_request")
    (call,) = of(ask, "tool_call")
    assert (req.name, req.call_id) == ("send_email", call.call_id)
    assert json.loads(req.arguments)["to"] == "bob@example.com"
    assert req.message == "Allow send_email to bob@example.com?"
    assert of(yes, "tool_result")[0].output.startswith("Email sent to bob@example.com")
    result = of(no, "tool_result")[0]
    assert result.is_error and "not yet" in result.output
    assert result.call_id == of(ask2, "tool_call")[0].call_id
    assert not errors(yes) and not errors(no) and text(no).startswith("Done.")


def test_langchain_qa_uses_its_prepare_input_hook(project: Any) -> None:
    settings = example(project, "langchain-qa", "langchain", "agent")

    async def go() -> tuple[list[Any], list[Any]]:
        runner = make_runner(settings)
        try:
            docs = await turn(runner, "search the docs for checkpoints")
            attached = await turn(
                runner,
                "what does the memo say?",
                session="s2",
                attachment_results=[{"filename": "memo.txt", "text": "The launch moves to May."}],
            )
            return docs, attached
        finally:
            await close(runner)

    docs, attached = run(go)
    (call,) = of(docs, "tool_call")
    assert call.name == "search_docs" and json.loads(call.arguments) == {"query": "checkpoints"}
    assert of(docs, "tool_result")[0].call_id == call.call_id
    assert text(attached) == "Based on the provided context: The launch moves to May."


def test_langchain_qa_sends_the_earlier_turns_with_the_question(project: Any) -> None:
    """The agent has no checkpointer: its hook rebuilds the conversation from the host's
    history each turn (tool calls and results stay out)."""
    settings = example(project, "langchain-qa", "langchain", "agent")
    history = [
        {"type": "user_message", "role": "user", "content": "Hello, my name is Ada."},
        {"type": "tool_call", "role": "assistant", "name": "search_docs", "call_id": "c1", "arguments": "{}"},
        {"type": "tool_result", "role": "user", "call_id": "c1", "content": "No documentation."},
        {"type": "assistant_message", "role": "assistant", "content": "Nice to meet you, Ada."},
    ]

    async def go() -> tuple[Any, list[Any]]:
        runner = make_runner(settings)
        try:
            hook = runner.entry.module.ksadk_prepare_input
            built = hook({"input": "What is my name?"}, {"history": history})
            return built, await turn(runner, "What is my name?", history=history)
        finally:
            await close(runner)

    built, events = run(go)
    assert [(m.type, m.text) for m in built["messages"]] == [
        ("human", "Hello, my name is Ada."),
        ("ai", "Nice to meet you, Ada."),
        ("human", "What is my name?"),
    ]
    assert not errors(events) and text(events)
