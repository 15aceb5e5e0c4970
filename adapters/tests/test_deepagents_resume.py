"""A DeepAgents run resumed after an approval: the model gets the whole conversation.

DeepAgents keeps messages in a LangGraph DeltaChannel: a checkpoint stores only the step's
writes and LangGraph rebuilds the list from older checkpoints. HostSaver keeps only the
latest checkpoints (and the host only the latest one per thread and namespace), so each
checkpoint must carry that history, in the same process and in a new one.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agentengine_runner.testing import collect, make_request
from conftest import approval, close, errors, make_runner, of, run, text, turn
from test_checkpoint import reduce

AGENT = """
import json
from typing import Any

from deepagents import create_deep_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class Recorder(BaseChatModel):
    '''Asks to send an email, then answers with what it was given (type: text).'''

    @property
    def _llm_type(self) -> str:
        return "recorder"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Recorder":
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        if not any(m.type == "tool" for m in messages):
            call = {"id": "call-1", "name": "send_email", "args": {"to": "bob", "body": "hi"}}
            message = AIMessage(content="", tool_calls=[call])
        else:
            seen = [[m.type, m.text if m.type != "system" else ""] for m in messages]
            message = AIMessage(content=json.dumps(seen))
        return ChatResult(generations=[ChatGeneration(message=message)])


def send_email(to: str, body: str) -> str:
    '''Sends an email.'''
    return f"sent to {to}"


agent = create_deep_agent(model=Recorder(), tools=[send_email], interrupt_on={"send_email": True})
"""

ASKED = "email bob that the build is green"


def seen_by_model(events: list[Any]) -> list[list[str]]:
    assert not errors(events), errors(events)
    return json.loads(text(events))


def test_the_resumed_model_call_has_the_users_message(project: Any) -> None:
    settings = project(AGENT, framework="deepagents", variable="agent")

    async def go() -> list[Any]:
        runner = make_runner(settings)
        try:
            first = await turn(runner, ASKED)
            (req,) = of(first, "approval_request")
            return await turn(runner, approval(req), resume=True, invocation="inv2")
        finally:
            await close(runner)

    seen = seen_by_model(run(go))
    assert [m[0] for m in seen] == ["system", "human", "ai", "tool"]
    assert seen[1][1] == ASKED and seen[3][1] == "sent to bob"


def test_a_new_process_resumes_from_the_hosts_checkpoints_alone(project: Any) -> None:
    settings = project(AGENT, framework="deepagents", variable="agent")

    async def request(runner: Any, body: Any, handed: tuple[Any, ...], resume: bool, inv: str) -> list[Any]:
        ctx = {
            "platform_context": {"app_name": "app", "user_id": "u1", "session_id": "s1", "invocation_id": inv},
            "history": [],
            "is_resume": resume,
            "state": {},
        }
        req = make_request(body, session_context=ctx, session_id="s1", user_id="u1", invocation_id=inv)
        return await collect(runner, dataclasses.replace(req, checkpoints=handed))

    async def go() -> list[Any]:
        first_runner = make_runner(settings)
        try:
            first = await request(first_runner, ASKED, (), False, "inv1")
        finally:
            await close(first_runner)
        handed = reduce(first, [])
        (req,) = of(first, "approval_request")
        second_runner = make_runner(settings)  # nothing in memory but what the host hands
        try:
            return await request(second_runner, approval(req), handed, True, "inv2")
        finally:
            await close(second_runner)

    seen = seen_by_model(run(go))
    assert [m[0] for m in seen] == ["system", "human", "ai", "tool"]
    assert seen[1][1] == ASKED
