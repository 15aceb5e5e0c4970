"""{{.Name}}: a Google ADK agent.

An LlmAgent with tools. agentengine serves it through `entry_point: agent.py:root_agent`;
it is plain ADK, so a google.adk Runner runs it too.

The model is ADK's LiteLlm on an OpenAI-compatible endpoint when OPENAI_API_KEY is set
(OPENAI_API_BASE or OPENAI_BASE_URL for the endpoint, OPENAI_MODEL_NAME for the model),
else the offline model in offline_model.py, so the project runs as is.
"""

import os

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, ToolContext


def adk_model():
    if os.environ.get("OPENAI_API_KEY"):
        # litellm's bundled model list, instead of downloading one each time it is imported.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        from google.adk.models.lite_llm import LiteLlm

        return LiteLlm(
            model="openai/" + os.environ.get("OPENAI_MODEL_NAME", "gpt-4o-mini"),
            api_base=os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL"),
        )
    from offline_model import OfflineAdkModel

    return OfflineAdkModel()


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
