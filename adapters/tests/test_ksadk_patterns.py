"""KsADK project patterns on the LangGraph bridge: custom state with an answer field,
ksadk_prepare_state rebuilding the history each turn, structured tool results. What the
model receives is recorded by a scripted model and asserted exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import close, errors, kinds, make_runner, run, text, turn

RECORDING = """
from agentengine_adapters.scripted import ScriptedChatModel

RECEIVED = []

class Recording(ScriptedChatModel):
    def _respond(self, messages):
        RECEIVED.append([f"{m.type}:{m.text}" for m in messages])
        return super()._respond(messages)
"""

CUSTOM_STATE = """
from typing import TypedDict
from langgraph.graph import START, END, StateGraph

class S(TypedDict):
    query: str
    KEY: str

def ksadk_prepare_state(payload, session_context):
    return {"query": payload["input"]}

def solve(state: S):
    return {"KEY": "answer to " + state["query"]}

b = StateGraph(S)
b.add_node("solve", solve)
b.add_edge(START, "solve")
b.add_edge("solve", END)
graph = b.compile()
"""


@pytest.mark.parametrize("key", ["answer", "output"])
def test_custom_state_answer_field_is_the_answer(project: Any, key: str) -> None:
    settings = project(CUSTOM_STATE.replace("KEY", key))

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "what is 2+2")
        finally:
            await close(runner)

    events = run(go)
    assert not errors(events)
    assert text(events) == "answer to what is 2+2"
    assert [k for k in kinds(events) if not k.startswith("checkpoint")][-1] == "message_done"


def test_output_wins_over_answer_and_messages(project: Any) -> None:
    settings = project(
        """
        from typing import Annotated, TypedDict
        from langchain_core.messages import AIMessage
        from langgraph.graph import START, StateGraph
        from langgraph.graph.message import add_messages

        class S(TypedDict):
            messages: Annotated[list, add_messages]
            answer: str
            output: str

        def solve(state):
            return {"answer": "from answer", "output": "from output"}

        b = StateGraph(S)
        b.add_node("solve", solve)
        b.add_edge(START, "solve")
        graph = b.compile()
        """
    )

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            return await turn(runner, "hi")
        finally:
            await close(runner)

    assert text(run(go)) == "from output"


HOOK_HISTORY = RECORDING + """
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph

model = Recording()

def ksadk_prepare_state(payload, session_context):
    # The KsADK sample pattern: the whole conversation rebuilt from the host's history.
    messages = [SystemMessage(content="You are terse.")]
    for m in payload.get("history") or []:
        if m["type"] == "user_message":
            messages.append(HumanMessage(content=m["content"]))
        elif m["type"] == "assistant_message":
            messages.append(AIMessage(content=m["content"]))
    messages.append(HumanMessage(content=payload["input"]))
    return {"messages": messages}

async def call_model(state: MessagesState):
    return {"messages": [await model.ainvoke(state["messages"])]}

b = StateGraph(MessagesState)
b.add_node("model", call_model)
b.add_edge(START, "model")
graph = b.compile()
"""


def test_hook_built_history_reaches_the_model_once_over_three_turns(project: Any) -> None:
    settings = project(HOOK_HISTORY)

    async def go() -> tuple[list[str], list[list[str]]]:
        runner = make_runner(settings)
        history: list[dict[str, Any]] = []
        answers = []
        try:
            for i, question in enumerate(["one", "two", "three"]):
                events = await turn(runner, question, history=list(history), invocation=f"inv{i}")
                assert not errors(events)
                answers.append(text(events))
                # What the host stores and projects for the next turn.
                history += [
                    {"role": "user", "type": "user_message", "content": question, "seq": 2 * i + 1},
                    {"role": "assistant", "type": "assistant_message", "content": text(events), "seq": 2 * i + 2},
                ]
            return answers, runner.entry.module.RECEIVED
        finally:
            await close(runner)

    answers, received = run(go)
    assert answers == ["You said: one", "You said: two", "You said: three"]
    assert received == [
        ["system:You are terse.", "human:one"],
        ["system:You are terse.", "human:one", "ai:You said: one", "human:two"],
        ["system:You are terse.", "human:one", "ai:You said: one", "human:two", "ai:You said: two", "human:three"],
    ]


DEFAULT_MAPPING = RECORDING + """
from langgraph.graph import START, MessagesState, StateGraph

model = Recording(responses=["noted"])

async def call_model(state: MessagesState):
    return {"messages": [await model.ainvoke(state["messages"])]}

b = StateGraph(MessagesState)
b.add_node("model", call_model)
b.add_edge(START, "model")
graph = b.compile()
"""

NOTE = {"temp": 21, "note": "a: b"}  # its text holds ": ", the display text's separator
CALL = {"role": "assistant", "type": "tool_call", "content": "[tool_call] get_weather({})", "call_id": "c1",
        "name": "get_weather", "arguments": '{"city": "Oslo"}', "seq": 2}
STORED = {"role": "user", "type": "tool_result", "content": f"[tool_result] get_weather: {json.dumps(NOTE)}",
          "call_id": "c1", "name": "get_weather", "output": json.dumps(NOTE), "seq": 3}
# A client's function_call_output: no tool name, the output as the client sent it.
CLIENT = {"role": "user", "type": "tool_result", "content": f"[tool_result] {json.dumps(NOTE)}",
          "call_id": "c1", "output": json.dumps(NOTE), "seq": 3}


def test_json_tool_output_reaches_the_model_intact_from_stored_and_client_results(project: Any) -> None:
    settings = project(DEFAULT_MAPPING)

    async def go() -> list[list[str]]:
        runner = make_runner(settings)
        try:
            for i, result in enumerate([STORED, CLIENT, {**CLIENT, "output": NOTE}]):
                history = [{"role": "user", "type": "user_message", "content": "weather?", "seq": 1}, CALL, result]
                assert not errors(await turn(runner, "thanks", history=history, invocation=f"inv{i}"))
            return runner.entry.module.RECEIVED
        finally:
            await close(runner)

    stored, client, client_object = run(go)
    assert stored == ["human:weather?", "ai:", f"tool:{json.dumps(NOTE)}", "human:thanks"]
    assert client == stored and client_object == stored


def test_run_threads_do_not_outlive_their_runs(project: Any) -> None:
    settings = project(
        """
        from langchain_core.messages import AIMessage
        from langgraph.graph import START, MessagesState, StateGraph

        def node(state: MessagesState):
            if state["messages"][-1].text == "fail":
                raise RuntimeError("boom")
            return {"messages": [AIMessage(content="ok")]}

        b = StateGraph(MessagesState)
        b.add_node("node", node)
        b.add_edge(START, "node")
        graph = b.compile()
        """
    )

    async def go() -> tuple[list[Any], list[Any], set[str], list[Any]]:
        runner = make_runner(settings)
        try:
            ok = await turn(runner, "hi", invocation="a")
            failed = await turn(runner, "fail", invocation="b")
            graph = await runner.graph()
            # A failed run's thread stays until the session's next turn: it can be
            # continued in place until then.
            kept = {c.config["configurable"]["thread_id"] async for c in graph.checkpointer.alist(None)}
            assert not errors(await turn(runner, "again", invocation="c"))
            left = [c async for c in graph.checkpointer.alist(None)]
            return ok, failed, kept, left
        finally:
            await close(runner)

    ok, failed, kept, left = run(go)
    assert text(ok) == "ok" and errors(failed)
    assert kept == {"2:u1/s1/run:b"}
    assert left == []
