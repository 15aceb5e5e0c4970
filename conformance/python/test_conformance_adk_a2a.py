"""Google ADK's RemoteA2aAgent delegating to an agentengine agent over A2A.

ADK's RemoteA2aAgent is built from the agent card agentengine serves; ADK's A2A client
resolves the card, streams the answer and keeps the remote context across turns. An ADK
coordinator (an LlmAgent whose model is scripted, the only fake here) delegates a question
to it as a tool and answers with what it said."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from conformance_fixtures import agentengine_bin, server  # noqa: F401 (fixtures)
from conformance_server import MODEL, Server

REMOTE = "echo_remote"


class DelegatingModel(BaseLlm):
    """Asks the remote agent (a tool) the user's question, then answers with its reply."""

    model: str = "scripted-delegator"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        results = [p.function_response for p in last.parts or [] if p.function_response]
        if results:
            reply = f"The remote agent said: {results[0].response.get('result')}"
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]), turn_complete=True)
            return
        question = "".join(p.text or "" for p in last.parts or [])
        call = types.FunctionCall(name=REMOTE, args={"request": question})
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]), turn_complete=True)


async def ask(runner: InMemoryRunner, session_id: str, question: str) -> dict[str, str]:
    """Each author's final text of one turn (complete events; partial ones are pieces of them)."""
    texts: dict[str, str] = {}
    msg = types.Content(role="user", parts=[types.Part(text=question)])
    async for ev in runner.run_async(user_id="u", session_id=session_id, new_message=msg):
        text = "".join(p.text or "" for p in (ev.content.parts or [] if ev.content else []) if not p.thought)
        if text and not ev.partial:
            texts[ev.author] = texts.get(ev.author, "") + text
    return texts


def remote_agent(server: Server) -> RemoteA2aAgent:  # noqa: F811
    return RemoteA2aAgent(name=REMOTE, agent_card=f"{server.origin}/a2a/{MODEL}/.well-known/agent-card.json")


def test_adk_coordinator_delegates_a_question(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        coordinator = LlmAgent(name="coordinator", model=DelegatingModel(), instruction="Delegate.", tools=[AgentTool(agent=remote_agent(server))])
        runner = InMemoryRunner(agent=coordinator, app_name="delegator")
        session = await runner.session_service.create_session(app_name="delegator", user_id="u")
        texts = await ask(runner, session.id, "hello from adk")
        assert texts["coordinator"] == "The remote agent said: Echo: hello from adk"

    asyncio.run(go())


def test_adk_remote_agent_keeps_the_context(server: Server) -> None:  # noqa: F811
    async def go() -> None:
        runner = InMemoryRunner(agent=remote_agent(server), app_name="remote")
        session = await runner.session_service.create_session(app_name="remote", user_id="u")
        first = await ask(runner, session.id, "hello from adk")
        assert first[REMOTE] == "Echo: hello from adk"
        # The next turn goes to the same remote context: agentengine's session has the first.
        second = await ask(runner, session.id, "history")
        assert "First user message: hello from adk" in second[REMOTE]

    asyncio.run(go())
