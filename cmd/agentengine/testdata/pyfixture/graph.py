"""Test fixture: a LangGraph graph without a model.

- "sleep S": waits S seconds, then answers with the session id of its invocation context
  read before and after the wait (two concurrent sessions must each see their own) and
  the runner's pid (pool tests).
- "spin S": keeps the CPU busy for S seconds (blocking, as CPU-bound Python code does),
  then answers like "sleep" (pool growth tests).
- "marker NAME": calls the slow_marker tool, which waits and then writes
  <state dir>/NAME; a cancelled run must never write it.
"""

import asyncio
import os
import time
from pathlib import Path

from agentengine_runner import get_current_invocation_context
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
async def slow_marker(name: str) -> str:
    """Say it started (`name`.started), wait, then write a marker file named `name` into
    the state directory."""
    Path(os.environ["AGENTENGINE_STATE_DIR"], name + ".started").write_text("started\n")
    await asyncio.sleep(float(os.environ.get("FIXTURE_MARKER_SLEEP", "3")))
    Path(os.environ["AGENTENGINE_STATE_DIR"], name).write_text("written\n")
    return f"marker {name} written"


async def respond(state: MessagesState) -> dict:
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"tool said: {last.content}")]}
    words = last.text.split()
    if len(words) == 2 and words[0] == "marker":
        call = {"name": "slow_marker", "args": {"name": words[1]}, "id": f"call_{words[1]}", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}
    before = get_current_invocation_context().session_id
    if len(words) == 2 and words[0] == "sleep":
        await asyncio.sleep(float(words[1]))
    if len(words) == 2 and words[0] == "spin":
        end = time.monotonic() + float(words[1])
        while time.monotonic() < end:
            pass
    after = get_current_invocation_context().session_id
    return {"messages": [AIMessage(content=f"session={before} after={after} pid={os.getpid()}")]}


builder = StateGraph(MessagesState)
builder.add_node("respond", respond)
builder.add_node("tools", ToolNode([slow_marker]))
builder.add_edge(START, "respond")
builder.add_conditional_edges("respond", tools_condition)
builder.add_edge("tools", "respond")
graph = builder.compile()
