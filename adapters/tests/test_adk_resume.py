"""A paused ADK pipeline (a SequentialAgent whose second step asks for confirmation),
resumable App or not, resumes where it stopped in a runner that did not pause it (a new
process): the approval's detail carries the paused call, ADK continues at the sub-agent
that made it, and the step before it does not run again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import errors, kinds, make_runner, of, run, text
from test_adk import turn

from agentengine_adapters.adk_bridge import AdkRunner

PIPELINE = """
from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.tools import FunctionTool
from agentengine_adapters.adk_scripted import ScriptedAdkLlm

FETCHED = []
DEPLOYED = []

def fetch_data(source: str) -> dict:
    \"\"\"Fetches the rows of a source.\"\"\"
    FETCHED.append(source)
    return {"rows": 3}

def deploy_app(target: str) -> dict:
    \"\"\"Deploys the app to a target.\"\"\"
    DEPLOYED.append(target)
    return {"deployed": target}

fetcher_model = ScriptedAdkLlm(responses=[{"tool": "fetch_data", "args": {"source": "db"}}, "fetched 3 rows"])
deployer_model = ScriptedAdkLlm(responses=[{"tool": "deploy_app", "args": {"target": "prod"}}, "deployed to prod"])
app = App(
    name="pipeline",
    root_agent=SequentialAgent(name="pipeline", sub_agents=[
        LlmAgent(name="fetcher", model=fetcher_model, tools=[fetch_data]),
        LlmAgent(name="deployer", model=deployer_model, tools=[FunctionTool(deploy_app, require_confirmation=True)]),
    ]),
    resumability_config=ResumabilityConfig(is_resumable=RESUMABLE),
)
"""


def history_after(events: list[Any]) -> list[dict[str, Any]]:
    """What the host projects of the paused turn for the resume turn."""
    out: list[dict[str, Any]] = [{"role": "user", "type": "user_message", "content": "run the pipeline", "seq": 1}]
    seq = 1
    for e in events:
        kind = e.WhichOneof("event")
        seq += 1
        if kind == "tool_call":
            out.append({"role": "assistant", "type": "tool_call", "content": "[tool_call]", "call_id": e.tool_call.call_id,
                        "name": e.tool_call.name, "arguments": e.tool_call.arguments, "seq": seq})
        elif kind == "tool_result":
            out.append({"role": "user", "type": "tool_result", "content": e.tool_result.output, "call_id": e.tool_result.call_id,
                        "name": e.tool_result.name, "output": json.dumps(e.tool_result.output), "seq": seq})
        elif kind == "message_done":
            out.append({"role": "assistant", "type": "assistant_message", "content": e.message_done.text, "seq": seq})
        elif kind == "approval_request":
            a = e.approval_request
            out.append({"role": "assistant", "type": "approval_request", "content": "[approval_request]", "call_id": a.call_id,
                        "name": a.name, "arguments": a.arguments, "seq": seq})
    return out


def paused_then_resumed(project: Any, resumable: bool) -> tuple[Any, list[Any]]:
    settings = project(PIPELINE.replace("RESUMABLE", str(resumable)), framework="adk", variable="app")

    async def go() -> tuple[Any, list[Any]]:
        first = make_runner(settings)
        assert isinstance(first, AdkRunner), getattr(first, "error", first)
        paused = await turn(first, "run the pipeline")
        approvals = of(paused, "approval_request")
        assert len(approvals) == 1 and not errors(paused), kinds(paused)
        a = approvals[0]
        # Another runner process: nothing in memory but what the host hands it.
        fresh = AdkRunner(settings, first.entry)
        answer = {"type": "mcp_approval_response", "approval_request_id": a.id, "approve": True}
        resume = {"approval_request_id": a.id, "approve": True, "call_id": a.call_id, "name": a.name,
                  "arguments": a.arguments, "detail": json.loads(a.detail_json)}
        resumed = await turn(fresh, answer, is_resume=True, history=history_after(paused), resume=resume,
                             resumes=[resume])
        return first.entry.module, resumed

    return run(go)


@pytest.mark.parametrize("resumable", [True, False])
def test_a_paused_pipeline_continues_at_the_paused_sub_agent_in_a_new_runner(project: Any, resumable: bool) -> None:
    module, resumed = paused_then_resumed(project, resumable)
    assert not errors(resumed), [e.message for e in errors(resumed)]
    assert module.DEPLOYED == ["prod"]
    assert module.FETCHED == ["db"]
    assert len(module.fetcher_model.requests) == 2, "the finished step ran again on resume"
    assert "deployed to prod" in text(resumed)
    assert not of(resumed, "approval_request")
