"""The OpenAI Agents SDK for Python (openai-agents) with the agent served as a model.

Plain, streamed and multi-turn runs over Responses and Chat Completions, a tool the server
runs (an mcp_call: the SDK must not look it up among its own tools) and approval round
trips with the SDK's own mechanisms: a hosted MCP tool with on_approval_request, and run
interruptions answered through the run state."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from agents import (
    Agent,
    HostedMCPTool,
    ItemHelpers,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from agents.items import ToolCallItem, ToolCallOutputItem
from openai import AsyncOpenAI
from openai.types.responses import ResponseTextDeltaEvent

from conformance_fixtures import agentengine_bin, server  # noqa: F401 (fixtures)
from conformance_server import MODEL, Server

TOOL_INPUT = "use the tool on paris"
TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.'
APPROVE_INPUT = "please approve deleting notes.txt"

set_tracing_disabled(True)  # no trace export: the tests stay on loopback

APIS = ["responses", "chat_completions"]
T = TypeVar("T")


def arun(server: Server, body: Callable[[AsyncOpenAI], Awaitable[T]]) -> T:
    """Runs body with a client on one event loop (an async client is bound to its loop)."""

    async def go() -> T:
        async with AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30.0) as c:
            return await body(c)

    return asyncio.run(go())


def make_agent(client: AsyncOpenAI, api: str, tools: list[Any] | None = None) -> Agent[Any]:
    model: Any
    if api == "responses":
        model = OpenAIResponsesModel(model=MODEL, openai_client=client)
    else:
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    return Agent(name="conformance", instructions="Be brief.", model=model, tools=tools or [])


def approvals(**kw: Any) -> HostedMCPTool:
    # The agent's approval requests carry server_label = the agent.
    return HostedMCPTool(
        tool_config={"type": "mcp", "server_label": MODEL, "server_url": "http://127.0.0.1:9/unused", "require_approval": "always"},
        **kw,
    )


@pytest.mark.parametrize("api", APIS)
def test_plain(server: Server, api: str) -> None:
    r = arun(server, lambda c: Runner.run(make_agent(c, api), "hello agents"))
    assert r.final_output == "Echo: hello agents"


@pytest.mark.parametrize("api", APIS)
def test_stream(server: Server, api: str) -> None:
    async def go(c: AsyncOpenAI) -> tuple[str, Any]:
        r = Runner.run_streamed(make_agent(c, api), "stream agents please")
        text = ""
        async for ev in r.stream_events():
            if ev.type == "raw_response_event" and isinstance(ev.data, ResponseTextDeltaEvent):
                text += ev.data.delta
        return text, r.final_output

    text, final = arun(server, go)
    assert text == "Echo: stream agents please"
    assert final == "Echo: stream agents please"


@pytest.mark.parametrize("api", APIS)
def test_multi_turn(server: Server, api: str) -> None:
    async def go(c: AsyncOpenAI) -> Any:
        agent = make_agent(c, api)
        first = await Runner.run(agent, "first question")
        return await Runner.run(agent, first.to_input_list() + [{"role": "user", "content": "history"}])

    second = arun(server, go)
    assert second.final_output.startswith("History: ")
    assert "First user message: first question" in second.final_output


@pytest.mark.parametrize("api", APIS)
def test_server_side_tool(server: Server, api: str) -> None:
    r = arun(server, lambda c: Runner.run(make_agent(c, api), TOOL_INPUT))
    assert r.final_output == TOOL_REPLY
    assert not any(isinstance(i, ToolCallOutputItem) for i in r.new_items), "the SDK executed nothing"
    if api == "responses":
        calls = [i for i in r.new_items if isinstance(i, ToolCallItem)]
        assert len(calls) == 1, [type(i).__name__ for i in r.new_items]
        raw = calls[0].raw_item
        assert getattr(raw, "type", None) == "mcp_call" and raw.name == "lookup" and raw.server_label == MODEL
        assert '"characters":5' in (raw.output or "")


def test_approval_callback(server: Server) -> None:
    seen: list[str] = []

    def on_approval(req: Any) -> Any:
        seen.append(req.data.name)
        return {"approve": True}

    r = arun(server, lambda c: Runner.run(make_agent(c, "responses", [approvals(on_approval_request=on_approval)]), APPROVE_INPUT))
    assert seen == ["delete_file"]
    assert r.final_output == "Approved: deleted notes.txt."


def test_approval_interruptions(server: Server) -> None:
    async def go(c: AsyncOpenAI) -> tuple[str, str]:
        agent = make_agent(c, "responses", [approvals()])
        r = await Runner.run(agent, APPROVE_INPUT)
        assert len(r.interruptions) == 1, r.interruptions
        state = r.to_state()
        state.reject(r.interruptions[0])
        rejected = await Runner.run(agent, state)

        s = Runner.run_streamed(agent, APPROVE_INPUT)
        async for _ in s.stream_events():
            pass
        assert len(s.interruptions) == 1
        state2 = s.to_state()
        state2.approve(s.interruptions[0])
        approved = await Runner.run(agent, state2)
        return str(rejected.final_output), str(approved.final_output)

    rejected, approved = arun(server, go)
    assert rejected.startswith("Rejected: kept notes.txt")
    assert approved == "Approved: deleted notes.txt."


def test_chat_approval_in_text(server: Server) -> None:
    async def go(c: AsyncOpenAI) -> tuple[str, Any]:
        agent = make_agent(c, "chat_completions")
        first = await Runner.run(agent, APPROVE_INPUT)
        second = await Runner.run(agent, first.to_input_list() + [{"role": "user", "content": "approve"}])
        return ItemHelpers.text_message_outputs(first.new_items), second.final_output

    asked, final = arun(server, go)
    assert "Approval required to run delete_file" in asked
    assert final == "Approved: deleted notes.txt."
