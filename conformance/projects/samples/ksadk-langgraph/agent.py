"""LangGraph sample: a tool-calling graph that asks before sending an email (interrupt())."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from typing import Any

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from common.model_config import make_langchain_chat_model
from common.tools import get_weather, send_email

tools = [tool(get_weather), tool(send_email)]
BY_NAME = {t.name: t for t in tools}
NEEDS_APPROVAL = {"send_email"}
model = make_langchain_chat_model().bind_tools(tools)
SYSTEM = SystemMessage(content="You are a helpful assistant. Use the tools when they help.")


def last_ai(state: MessagesState) -> AIMessage:
    return next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))


def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke([SYSTEM, *state["messages"]])]}


def route(state: MessagesState) -> str:
    return "approval" if last_ai(state).tool_calls else END


def approval(state: MessagesState) -> dict[str, Any]:
    """Asks a person about each side-effecting call; a rejection answers the call itself."""
    declined = []
    for call in last_ai(state).tool_calls:
        if call["name"] not in NEEDS_APPROVAL:
            continue
        answer = interrupt({"tool_call_id": call["id"], "name": call["name"], "args": call["args"]})
        approved = answer.get("approve") if isinstance(answer, dict) else bool(answer)
        if not approved:
            declined.append(ToolMessage(content="The user declined.", tool_call_id=call["id"], name=call["name"]))
    return {"messages": declined}


def run_tools(state: MessagesState) -> dict[str, Any]:
    answered = {m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)}
    # A tool invoked with a tool call returns the ToolMessage answering it.
    return {"messages": [BY_NAME[c["name"]].invoke(c) for c in last_ai(state).tool_calls if c["id"] not in answered]}


workflow = StateGraph(MessagesState)
workflow.add_node("agent", call_model)
workflow.add_node("approval", approval)
workflow.add_node("tools", run_tools)
workflow.add_edge(START, "agent")
workflow.add_conditional_edges("agent", route, ["approval", END])
workflow.add_edge("approval", "tools")
workflow.add_edge("tools", "agent")
root_agent = workflow.compile()
