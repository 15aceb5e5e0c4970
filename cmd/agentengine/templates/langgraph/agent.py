"""{{.Name}}: a LangGraph agent.

A chat model that may call tools, looping until it answers: the classic LangGraph
"agent + tools" graph. agentengine serves it through `entry_point: agent.py:graph`; it is
plain LangGraph, so `graph.invoke(...)` or any other LangGraph host runs it too.

The model is ChatOpenAI when OPENAI_API_KEY is set (OPENAI_API_BASE or OPENAI_BASE_URL
for an OpenAI-compatible endpoint, OPENAI_MODEL_NAME for the model), else the offline
model in offline_model.py, so the project runs as is.
"""

import os

from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def chat_model():
    if os.environ.get("OPENAI_API_KEY"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=os.environ.get("OPENAI_MODEL_NAME", "gpt-4o-mini"),
            base_url=os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL"),
        )
    from offline_model import OfflineChatModel

    return OfflineChatModel()


@tool
def get_weather(city: str) -> str:
    """Return the current weather for a city."""
    return f"It is sunny and 22 degrees in {city}."


TOOLS = [get_weather]
model = chat_model().bind_tools(TOOLS)


async def call_model(state: MessagesState) -> dict:
    return {"messages": [await model.ainvoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("tools", ToolNode(TOOLS))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", tools_condition)
builder.add_edge("tools", "model")

# No checkpointer: agentengine gives the graph one when it serves it.
graph = builder.compile()
