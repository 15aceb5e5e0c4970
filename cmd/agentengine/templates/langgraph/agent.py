"""{{.Name}}: a LangGraph agent served by agentengine.

A chat model that may call tools, looping until it answers: the classic LangGraph
"agent + tools" graph. agentengine finds it through `entry_point: agent.py:graph`.

chat_model() is a real OpenAI model when OPENAI_API_KEY is set (in .env) and an offline
scripted model otherwise, so the project runs as is.
"""

from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agentengine_adapters.models import chat_model


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

# No checkpointer needed: agentengine gives the graph a durable one
# (.agentengine/checkpoints.sqlite), so interrupts survive a runner restart.
graph = builder.compile()
