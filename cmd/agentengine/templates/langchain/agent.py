"""{{.Name}}: a LangChain agent (create_agent).

agentengine serves it through `entry_point: agent.py:agent`; it is plain LangChain, so
`agent.invoke({"messages": [...]})` runs it too.

The model is ChatOpenAI when OPENAI_API_KEY is set (OPENAI_API_BASE or OPENAI_BASE_URL
for an OpenAI-compatible endpoint, OPENAI_MODEL_NAME for the model), else the offline
model in offline_model.py, so the project runs as is.
"""

import os

from langchain.agents import create_agent
from langchain_core.tools import tool


def chat_model():
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


agent = create_agent(
    model=chat_model(),
    tools=[get_weather],
    system_prompt="You are a helpful assistant. Use the tools when they help.",
)
