"""KsADK runner_class sample: a subclass of KsADK's own LangGraphRunner that overrides
invoke and stream (the shape of KsADK's long-task-resume sample). There is no agent
object (root_agent = None): the class builds its graph itself and answers "status"
turns without it."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from typing import Any

from ksadk.runners.langgraph_runner import LangGraphRunner
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from common.model_config import make_langchain_chat_model
from common.tools import get_weather, send_email

tools = [tool(get_weather), tool(send_email)]
BY_NAME = {t.name: t for t in tools}
NEEDS_APPROVAL = {"send_email"}
SYSTEM = SystemMessage(content="You are a helpful assistant. Use the tools when they help.")


def build_graph() -> Any:
    model = make_langchain_chat_model().bind_tools(tools)

    def last_ai(state: MessagesState) -> AIMessage:
        return next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke([SYSTEM, *state["messages"]])]}

    def route(state: MessagesState) -> str:
        return "approval" if last_ai(state).tool_calls else END

    def approval(state: MessagesState) -> dict[str, Any]:
        declined = []
        for call in last_ai(state).tool_calls:
            if call["name"] not in NEEDS_APPROVAL:
                continue
            answer = interrupt({"tool_call_id": call["id"], "tool_name": call["name"], "tool_args": call["args"]})
            approved = answer.get("approve") if isinstance(answer, dict) else bool(answer)
            if not approved:
                declined.append(ToolMessage(content="The user declined.", tool_call_id=call["id"], name=call["name"]))
        return {"messages": declined}

    def run_tools(state: MessagesState) -> dict[str, Any]:
        answered = {m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)}
        return {"messages": [BY_NAME[c["name"]].invoke(c) for c in last_ai(state).tool_calls if c["id"] not in answered]}

    workflow = StateGraph(MessagesState)
    workflow.add_node("agent", call_model)
    workflow.add_node("approval", approval)
    workflow.add_node("tools", run_tools)
    workflow.add_edge(START, "agent")
    workflow.add_conditional_edges("agent", route, ["approval", END])
    workflow.add_edge("approval", "tools")
    workflow.add_edge("tools", "agent")
    return workflow.compile(checkpointer=InMemorySaver())


class FixtureRunner(LangGraphRunner):
    """A KsADK LangGraphRunner subclass serving its own graph."""

    def load_agent(self) -> None:
        self._agent = build_graph()
        self._module = None

    async def invoke(self, input_data: dict[str, Any]) -> dict[str, Any]:
        if str(input_data.get("input") or "").startswith("status"):
            return {"output": self._status(input_data)}
        return await super().invoke(input_data)

    async def stream(self, input_data: dict[str, Any]):
        if str(input_data.get("input") or "").startswith("status"):
            output = self._status(input_data)
            words = output.split(" ")
            for i, word in enumerate(words):
                yield {"type": "text", "delta": word if i == len(words) - 1 else word + " "}
            yield {"type": "final", "output": output}
            return
        async for chunk in super().stream(input_data):
            yield chunk

    @staticmethod
    def _status(input_data: dict[str, Any]) -> str:
        # KsADK's history: [{role: user|model, content}], this turn's message last.
        history = input_data.get("history") or []
        earlier = "; ".join(f"{m['role']}: {m['content']}" for m in history[:-1]) or "none"
        return f"FixtureRunner status: {len(history) - 1} earlier messages ({earlier})"


root_agent = None
