"""ADK's agent graph through the ADK bridge's Call (adk_graph.py), drawn by the real
google-adk as its dev server draws it."""

from __future__ import annotations

from typing import Any

import pytest
from agentengine_runner import CallError
from conftest import make_runner, run

from agentengine_adapters.adk_bridge import AdkRunner

AGENT = """
from google.adk.agents import LlmAgent
from agentengine_adapters.adk_scripted import ScriptedAdkLlm

def get_weather(city: str) -> dict:
    \"\"\"The forecast for a city.\"\"\"
    return {"city": city, "forecast": "sunny"}

helper = LlmAgent(name="helper", model=ScriptedAdkLlm(), instruction="Help.")
root_agent = LlmAgent(name="assistant", model=ScriptedAdkLlm(), instruction="Be brief.",
                      tools=[get_weather], sub_agents=[helper])
"""


@pytest.fixture
def adk(project: Any) -> AdkRunner:
    runner = make_runner(project(AGENT, framework="adk", variable="root_agent"))
    assert isinstance(runner, AdkRunner), getattr(runner, "error", runner)
    return runner


def graph(runner: AdkRunner, arg: Any) -> Any:
    return run(lambda: runner.call("adk.graph", arg))


def test_the_base_graph_names_every_agent_and_tool(adk: AdkRunner) -> None:
    out = graph(adk, {})
    dot = out["dotSrc"]
    assert "digraph {" in dot
    for name in ("assistant", "helper", "get_weather"):
        assert name in dot


def test_a_highlighted_call_is_drawn_differently(adk: AdkRunner) -> None:
    plain = graph(adk, {"highlights": []})["dotSrc"]
    lit = graph(adk, {"highlights": [["assistant", "get_weather"]]})["dotSrc"]
    assert lit != plain
    # A reply (tool to agent) and an agent alone ([author, ""]) highlight too.
    assert graph(adk, {"highlights": [["get_weather", "assistant"]]})["dotSrc"] != plain
    assert graph(adk, {"highlights": [["assistant", ""]]})["dotSrc"] != plain


@pytest.mark.parametrize(
    "arg",
    [
        [1],
        {"highlights": "assistant"},
        {"highlights": [["assistant"]]},
        {"highlights": [["assistant", 3]]},
        {"dark_mode": "yes"},
    ],
)
def test_bad_arguments_are_refused(adk: AdkRunner, arg: Any) -> None:
    with pytest.raises(CallError):
        graph(adk, arg)
