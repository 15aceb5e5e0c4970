"""A Google ADK assistant: a weather tool, and a file tool that asks before it runs."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, ToolContext

from agentengine_adapters.models import adk_model


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
