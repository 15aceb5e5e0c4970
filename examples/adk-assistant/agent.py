"""A Google ADK assistant: a weather tool, and a file tool that asks before it runs.

adk_model() is ADK's LiteLlm on an OpenAI-compatible endpoint when OPENAI_API_KEY is set
(OPENAI_API_BASE or OPENAI_BASE_URL, OPENAI_MODEL_NAME), else the offline model in
offline_model.py.
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.tools import FunctionTool, ToolContext


def adk_model() -> BaseLlm:
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


def get_weather(city: str, tool_context: ToolContext) -> dict[str, str]:
    """Returns the weather forecast for a city."""
    # State keys with ADK's prefixes land in agentengine's tiers: user: follows the user
    # across sessions, app: is shared by all users, temp: is never stored.
    tool_context.state["user:last_city"] = city
    tool_context.state["temp:lookup"] = city
    return {"city": city, "forecast": "sunny", "temperature_c": "21"}


def delete_file(path: str) -> dict[str, str]:
    """Deletes a file (pretend): runs only after a person approves the call."""
    return {"deleted": path}


root_agent = LlmAgent(
    name="assistant",
    model=adk_model(),
    description="An ADK assistant with a weather tool and an approval-gated file tool.",
    instruction="You are a concise assistant. Use the tools when they help.",
    tools=[get_weather, FunctionTool(delete_file, require_confirmation=True)],
)
