"""Google ADK sample: an agent with tools on LiteLlm; sending an email asks for confirmation."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from google.adk import Agent
from google.adk.tools import FunctionTool

from common.model_config import make_adk_litellm_model
from common.tools import get_weather, send_email

root_agent = Agent(
    name="matrix_adk",
    model=make_adk_litellm_model(),
    description="ADK sample with a weather tool and an email tool that needs confirmation.",
    instruction="You are a helpful assistant. Use the tools when they help.",
    tools=[get_weather, FunctionTool(send_email, require_confirmation=True)],
)
