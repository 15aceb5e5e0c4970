"""{{.Name}}: a Google ADK agent served by agentengine.

An LlmAgent with tools; agentengine finds it through `entry_point: agent.py:root_agent`.
adk_model() is an OpenAI-compatible model (ADK's LiteLlm) when OPENAI_API_KEY is set (in
.env) and an offline scripted model otherwise, so the project runs as is.
"""

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, ToolContext

from agentengine_adapters.models import adk_model


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """Return the current weather for a city."""
    tool_context.state["user:last_city"] = city  # user: state follows the user across sessions
    return {"city": city, "forecast": "sunny", "temperature_c": 22}


def delete_file(path: str) -> dict:
    """Delete a file (pretend). Asks a person first: require_confirmation=True."""
    return {"deleted": path}


root_agent = LlmAgent(
    name="assistant",
    model=adk_model(),
    description="{{.Title}} agent {{.Name}}",
    instruction="You are a concise assistant. Use the tools when they help.",
    tools=[get_weather, FunctionTool(delete_file, require_confirmation=True)],
)
