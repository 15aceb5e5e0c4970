"""deepagents-research: a DeepAgents research assistant that plans and writes a report.

create_deep_agent gives the agent a virtual filesystem (write_file, read_file, edit_file,
ls, ...) and, with TodoListMiddleware, a todo list (write_todos). agentengine reports
every file the agent writes as a workspace file event and keeps the todo list in the
session state ("todos").

chat_model() is langchain-openai's ChatOpenAI when OPENAI_API_KEY is set (OPENAI_API_BASE or
OPENAI_BASE_URL, OPENAI_MODEL_NAME), else the offline model in offline_model.py.
"""

from __future__ import annotations

import os

from deepagents import create_deep_agent
from langchain.agents.middleware import TodoListMiddleware


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


agent = create_deep_agent(
    model=chat_model(),
    system_prompt=(
        "You are a research assistant. Plan with write_todos, keep notes and write the "
        "final report to a markdown file with write_file, then summarise it briefly."
    ),
    middleware=[TodoListMiddleware()],
    name="research",
)
