"""{{.Name}}: a DeepAgents agent served by agentengine.

create_deep_agent adds planning (write_todos), a virtual file system and sub-agents to a
tool-calling model. agentengine finds it through `entry_point: agent.py:agent`.
chat_model() is a real OpenAI model when OPENAI_API_KEY is set (in .env) and an offline
scripted model otherwise, so the project runs as is.
"""

from deepagents import create_deep_agent
from langchain_core.tools import tool

from agentengine_adapters.models import chat_model


@tool
def get_weather(city: str) -> str:
    """Return the current weather for a city."""
    return f"It is sunny and 22 degrees in {city}."


agent = create_deep_agent(
    model=chat_model(),
    tools=[get_weather],
    system_prompt="You are a careful assistant. Plan, use the tools, and answer briefly.",
)
