"""deepagents-research: a DeepAgents research assistant that plans and writes a report.

create_deep_agent gives the agent a virtual filesystem (write_file, read_file, edit_file,
ls, ...) and, with TodoListMiddleware, a todo list (write_todos). agentengine reports
every file the agent writes as a workspace file event and keeps the todo list in the
session state ("todos").

chat_model() is OpenAI when OPENAI_API_KEY is set and an offline scripted model otherwise.
"""

from __future__ import annotations

from deepagents import create_deep_agent
from langchain.agents.middleware import TodoListMiddleware

from agentengine_adapters.models import chat_model

agent = create_deep_agent(
    model=chat_model(),
    system_prompt=(
        "You are a research assistant. Plan with write_todos, keep notes and write the "
        "final report to a markdown file with write_file, then summarise it briefly."
    ),
    middleware=[TodoListMiddleware()],
    name="research",
)
