"""A LangGraph echo agent for recording KsADK fixtures: a fake chat model, no network."""
from typing import Any, Iterator, List, Optional

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph


class EchoModel(BaseChatModel):
    """Answers with the last user message and how many earlier messages it was given."""

    @property
    def _llm_type(self) -> str:
        return "echo"

    def _reply(self, messages: List[BaseMessage]) -> str:
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        last = humans[-1].content if humans else ""
        earlier = [m for m in messages[:-1] if isinstance(m, (HumanMessage, AIMessage))]
        return f"Echo: {last} (history: {len(earlier)} messages)"

    def _generate(self, messages: List[BaseMessage], stop: Optional[List[str]] = None,
                  run_manager: Optional[CallbackManagerForLLMRun] = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self._reply(messages)))])

    def _stream(self, messages: List[BaseMessage], stop: Optional[List[str]] = None,
                run_manager: Optional[CallbackManagerForLLMRun] = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        words = self._reply(messages).split(" ")
        for i, w in enumerate(words):
            text = w if i == 0 else " " + w
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
            if run_manager:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk


model = EchoModel()


@tool
def lookup(query: str) -> str:
    """Looks a word up (offline: reports its length)."""
    return f"{query} has {len(query)} letters"


def answer(state: MessagesState) -> dict:
    last = state["messages"][-1].content if state["messages"] else ""
    if isinstance(last, str) and "tool" in last:
        # A tool run inside the graph: KsADK records its call and result.
        found = lookup.invoke({"query": last.split()[-1]})
        return {"messages": [model.invoke(state["messages"] + [AIMessage(content=found)])]}
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
root_agent = builder.compile()
