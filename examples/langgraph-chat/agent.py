"""langgraph-chat: a LangGraph tool-calling chat agent that asks before side effects.

A hand-written "model -> approval -> tools -> model" graph. Reading tools run at once;
send_email only after a person approves it: the approval node calls LangGraph's
interrupt() for it, agentengine turns that into an approval request, and the client's
answer comes back as interrupt()'s return value when the run resumes.

chat_model() is langchain-openai's ChatOpenAI when OPENAI_API_KEY is set (OPENAI_API_BASE or
OPENAI_BASE_URL, OPENAI_MODEL_NAME), else the offline model in offline_model.py.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt


try:  # the request's identity, when agentengine (or KsADK) serves the graph
    from ksadk.runtime_context import get_current_invocation_context
except ImportError:

    def get_current_invocation_context() -> None:
        return None


def chat_model():
    """ChatOpenAI with OPENAI_API_KEY set, else the offline model in offline_model.py."""
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


@tool
def send_email(to: str, body: str) -> str:
    """Send an email (a side effect: needs the user's approval)."""
    return f"Email sent to {to} ({len(body)} characters)."


@tool
def session_info() -> str:
    """Describe the current session (who is asking, in which session)."""
    ctx = get_current_invocation_context()
    if ctx is None:
        return "no agentengine session (the graph runs outside agentengine)"
    return f"user {ctx.user_id}, session {ctx.session_id}, invocation {ctx.invocation_id}"


TOOLS = {t.name: t for t in (get_weather, send_email, session_info)}
NEEDS_APPROVAL = {"send_email"}
model = chat_model().bind_tools(list(TOOLS.values()))


def last_ai(state: MessagesState) -> AIMessage:
    return next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))


async def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await model.ainvoke(state["messages"])]}


def route(state: MessagesState) -> str:
    return "approval" if last_ai(state).tool_calls else END


def approval(state: MessagesState) -> dict[str, Any]:
    """One interrupt per side-effecting call; a rejection answers the call itself."""
    rejected = []
    for call in last_ai(state).tool_calls:
        if call["name"] not in NEEDS_APPROVAL:
            continue
        answer = interrupt(
            {
                "tool_call_id": call["id"],
                "name": call["name"],
                "args": call["args"],
                "message": f"Allow {call['name']} to {call['args'].get('to', 'someone')}?",
            }
        )
        approved = answer.get("approve") if isinstance(answer, dict) else bool(answer)
        if not approved:
            reason = answer.get("reason") if isinstance(answer, dict) else ""
            rejected.append(
                ToolMessage(
                    content=f"Not sent: the user declined ({reason or 'no reason given'}).",
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
            )
    return {"messages": rejected}


async def run_tools(state: MessagesState) -> dict[str, Any]:
    answered = {m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)}
    results = []
    for call in last_ai(state).tool_calls:
        if call["id"] not in answered:
            results.append(await TOOLS[call["name"]].ainvoke(call))
    return {"messages": results}


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("approval", approval)
builder.add_node("tools", run_tools)
builder.add_edge(START, "model")
builder.add_conditional_edges("model", route, ["approval", END])
builder.add_edge("approval", "tools")
builder.add_edge("tools", "model")

# No checkpointer: agentengine compiles in one whose checkpoints it keeps in its session
# store, so a pending approval survives a runner restart.
graph = builder.compile()
