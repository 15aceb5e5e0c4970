"""One LangGraph node that echoes the last user message: no model, no tools."""

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def echo(state: MessagesState) -> dict:
    content = state["messages"][-1].content
    if not isinstance(content, str):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return {"messages": [AIMessage(content="you said " + content)]}


builder = StateGraph(MessagesState)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
graph = builder.compile()
