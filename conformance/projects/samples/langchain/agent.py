"""LangChain sample: create_agent with tools; sending an email waits for a person's approval."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware

from common.model_config import make_langchain_chat_model
from common.tools import get_weather, send_email

root_agent = create_agent(
    model=make_langchain_chat_model(),
    tools=[get_weather, send_email],
    system_prompt="You are a helpful assistant. Use the tools when they help.",
    middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_email": True})],
)
