"""Test fixture: a specialist subgraph, then a node that writes its answer again.

route_turn -> run_specialist -> finalize_answer: run_specialist runs a ReAct subgraph
(a scripted tool-calling model + ToolNode) whose model streams the answer token by
token; finalize_answer then writes that answer a second time, as an AIMessage of its
own and in `answer` (the shape of KsADK's agentengine-toolsets sample). The turn must
answer once on every surface.
"""

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from agentengine_adapters.scripted import ScriptedChatModel


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny and 21 C in {city}"


TOOLS = [get_weather]
model = ScriptedChatModel().bind_tools(TOOLS)


class State(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], add_messages]
    route: str
    specialist_messages: list[BaseMessage]
    answer: str


def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


specialist_graph = StateGraph(MessagesState)
specialist_graph.add_node("agent", call_model)
specialist_graph.add_node("tools", ToolNode(TOOLS))
specialist_graph.add_edge(START, "agent")
specialist_graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
specialist_graph.add_edge("tools", "agent")
specialist = specialist_graph.compile()


def route_turn(state: State) -> dict[str, Any]:
    return {"route": "weather" if "weather" in state["messages"][-1].text.lower() else "general"}


def run_specialist(state: State) -> dict[str, Any]:
    result = specialist.invoke({"messages": state["messages"]})
    return {"specialist_messages": result["messages"]}


def finalize_answer(state: State) -> dict[str, Any]:
    answer = next(
        (m.text for m in reversed(state.get("specialist_messages") or []) if isinstance(m, AIMessage) and m.text),
        "no answer",
    )
    return {"answer": answer, "messages": [AIMessage(content=answer)]}


workflow = StateGraph(State)
workflow.add_node("route_turn", route_turn)
workflow.add_node("run_specialist", run_specialist)
workflow.add_node("finalize_answer", finalize_answer)
workflow.add_edge(START, "route_turn")
workflow.add_edge("route_turn", "run_specialist")
workflow.add_edge("run_specialist", "finalize_answer")
workflow.add_edge("finalize_answer", END)
root_agent = workflow.compile()
