"""langchain-qa: a LangChain v1 create_agent that answers from docs and attachments.

- search_docs looks things up in a small built-in document set.
- ksadk_prepare_input(payload, session_context) builds the agent's input: the earlier
  turns (session_context["history"]) and the question plus the text agentengine extracted
  from attached files (attachment_results), so "summarize this PDF" and follow-ups about it
  work. agentengine calls it every turn.

chat_model() is langchain-openai's ChatOpenAI when OPENAI_API_KEY is set (OPENAI_API_BASE or
OPENAI_BASE_URL, OPENAI_MODEL_NAME), else the offline model in offline_model.py.
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

DOCS = {
    "checkpoints": "LangGraph saves a checkpoint of the graph state after every step; "
    "agentengine keeps them in its session store, so interrupts survive restarts.",
    "interrupts": "interrupt() pauses a graph until a person answers; the answer is the "
    "value interrupt() returns when the run resumes.",
    "streaming": "agentengine streams model tokens, tool calls and tool results as they happen.",
}


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
def search_docs(query: str) -> str:
    """Search the product documentation for a topic."""
    words = {w.strip("?.,!").lower() for w in query.split()}
    hits = [text for topic, text in DOCS.items() if topic in words or topic.rstrip("s") in words]
    return "\n".join(hits) or f"No documentation mentions {query!r}."


agent = create_agent(
    chat_model(),
    [search_docs],
    system_prompt="You answer questions about agentengine. Use search_docs for product "
    "questions and the attached documents when the user refers to them.",
)


# History entries holding a turn's text (KsADK's items have no type).
TEXT_TYPES = (None, "user_message", "assistant_message", "message")


def history_messages(history: Any) -> list[BaseMessage]:
    """The conversation so far ({"role", "content"} items) as chat messages; tool calls and
    other entries without a user or assistant text are left out."""
    out: list[BaseMessage] = []
    for item in history if isinstance(history, list) else []:
        if not isinstance(item, dict):
            continue
        role, content = item.get("role"), item.get("content")
        if item.get("type") not in TEXT_TYPES or not isinstance(content, str) or not content:
            continue
        if role == "user":
            out.append(HumanMessage(content=content))
        elif role in ("assistant", "model"):
            out.append(AIMessage(content=content))
    return out


def ksadk_prepare_input(payload: dict[str, Any], session_context: dict[str, Any]) -> dict[str, Any]:
    """The turn's input: the earlier turns, then the question with extracted attachment
    text appended.

    The agent has no checkpointer, so it sees exactly what this returns each turn: the
    conversation comes from session_context["history"] (KsADK also puts it in
    payload["history"]).
    """
    history = session_context.get("history") or payload.get("history")
    question = payload.get("input") or ""
    texts = [
        item["text"]
        for item in payload.get("attachment_results", [])
        if isinstance(item, dict) and item.get("text")
    ]
    if texts:
        question = f"{question}\n\nContext: " + "\n\n".join(texts)
    return {"messages": [*history_messages(history), HumanMessage(content=question)]}
