"""One answer per turn: a node that writes the streamed answer again as an AIMessage of
its own (a specialist subgraph, then finalize_answer) adds no second copy. The turn's
answer is what streamed, as KsADK reads it; a complete message counts only when nothing
streamed."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import REPO, close, errors, kinds, make_runner, of, run, text, turn

FINALIZE = (REPO / "cmd/agentengine/testdata/pyfinalize/agent.py").read_text()

# The specialist as a subgraph node sharing `messages`, then a finalize node.
SUBGRAPH_NODE = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from agentengine_adapters.scripted import ScriptedChatModel

model = ScriptedChatModel()

def agent(state):
    return {"messages": [model.invoke(state["messages"])]}

inner = StateGraph(MessagesState)
inner.add_node("agent", agent)
inner.add_edge(START, "agent")

def finalize_answer(state):
    last = state["messages"][-1]
    return {"messages": [AIMessage(content=last.text)]}

b = StateGraph(MessagesState)
b.add_node("specialist", inner.compile())
b.add_node("finalize_answer", finalize_answer)
b.add_edge(START, "specialist")
b.add_edge("specialist", "finalize_answer")
graph = b.compile()
"""

# No model streams: two nodes write the same text; it is the answer once.
WHOLE_TWICE = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

def draft(state):
    return {"messages": [AIMessage(content="The answer is 42.")]}

def finalize_answer(state):
    return {"messages": [AIMessage(content="The answer is 42.")]}

b = StateGraph(MessagesState)
b.add_node("draft", draft)
b.add_node("finalize_answer", finalize_answer)
b.add_edge(START, "draft")
b.add_edge("draft", "finalize_answer")
graph = b.compile()
"""

# A node's own message before a model streams: nothing is repeated, both are said.
WHOLE_THEN_STREAMED = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from agentengine_adapters.scripted import ScriptedChatModel

model = ScriptedChatModel()

def ack(state):
    return {"messages": [AIMessage(content="Looking into it.")]}

def agent(state):
    return {"messages": [model.invoke(state["messages"][:-1])]}

b = StateGraph(MessagesState)
b.add_node("ack", ack)
b.add_node("agent", agent)
b.add_edge(START, "ack")
b.add_edge("ack", "agent")
graph = b.compile()
"""


def _turn(settings: Any, question: str) -> list[Any]:
    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, question)
        finally:
            await close(runner)

    return run(go)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("hello there", "You said: hello there"),
        ("what is the weather in city=Paris", "Done. get_weather returned: sunny and 21 C in Paris."),
    ],
)
def test_specialist_then_finalize_answers_once(project: Any, question: str, answer: str) -> None:
    events = _turn(project(FINALIZE, variable="root_agent"), question)
    assert not errors(events)
    assert answer in text(events)
    assert text(events).count(answer) == 1, text(events)
    # streamed token by token, then closed once
    assert kinds(events).count("text_delta") > 1
    assert kinds(events).count("message_done") == 1
    if "weather" in question:
        assert [c.name for c in of(events, "tool_call")] == ["get_weather"]
        assert len(of(events, "tool_result")) == 1


def test_subgraph_node_then_finalize_answers_once(project: Any) -> None:
    events = _turn(project(SUBGRAPH_NODE), "hi")
    assert not errors(events)
    assert text(events) == "You said: hi"
    assert kinds(events).count("message_done") == 1


def test_the_same_whole_message_twice_is_one_answer(project: Any) -> None:
    events = _turn(project(WHOLE_TWICE), "hi")
    assert text(events) == "The answer is 42."
    assert kinds(events).count("message_done") == 1


def test_a_node_message_before_streamed_text_is_kept(project: Any) -> None:
    events = _turn(project(WHOLE_THEN_STREAMED), "hi")
    assert text(events) == "Looking into it.You said: hi"
    assert kinds(events).count("message_done") == 2


# The model only thinks and calls a tool; a node then writes the answer from the result.
THINK_THEN_NODE = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph

# Inline <think> markup in the streamed text (as reasoning models without a reasoning field send).
model = GenericFakeChatModel(messages=iter([AIMessage(content="<think>look it up</think>", tool_calls=[
    {"name": "lookup", "args": {}, "id": "call_1", "type": "tool_call"}])]))

def agent(state):
    return {"messages": [model.invoke(state["messages"])]}

def tools(state):
    return {"messages": [ToolMessage(content="42", tool_call_id="call_1", name="lookup")]}

def answer(state):
    return {"messages": [AIMessage(content="The answer is " + state["messages"][-1].text)]}

b = StateGraph(MessagesState)
b.add_node("agent", agent)
b.add_node("tools", tools)
b.add_node("answer", answer)
b.add_edge(START, "agent")
b.add_edge("agent", "tools")
b.add_edge("tools", "answer")
graph = b.compile()
"""


def test_streamed_reasoning_alone_leaves_a_node_answer(project: Any) -> None:
    events = _turn(project(THINK_THEN_NODE), "hi")
    assert not errors(events)
    assert "".join(r.text for r in of(events, "reasoning_delta")) == "look it up"
    assert text(events) == "The answer is 42"
