"""Test fixture: the shape of KsADK's tool-calling tutorial (LangChain). A create_agent
agent (without a checkpointer) and a ksadk_prepare_state hook that returns only the input
text. The model says what it received, so a test can tell whether earlier turns reached
it."""

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from agentengine_adapters.scripted import ScriptedChatModel


class Reporting(ScriptedChatModel):
    def _respond(self, messages):
        said = [m.text for m in messages if isinstance(m, HumanMessage)]
        answers = [m.text for m in messages if isinstance(m, AIMessage)]
        return AIMessage(content=f"{len(said)} user messages: {' | '.join(said)}; {len(answers)} answers")


def ksadk_prepare_state(payload: dict, session_context: dict) -> dict:
    return {"input": str(payload.get("input") or "")}


root_agent = create_agent(model=Reporting(), tools=[], system_prompt="Answer briefly.")
