"""LangChain (langchain-openai ChatOpenAI) over the Responses API and Chat Completions.

Plain, streamed and multi-turn calls; a tool the server runs, which must never become an
AIMessage tool call (an agent loop would run it again); an approval round trip with
LangChain's own mechanism (the remote MCP tool's mcp_approval_request answered by an
mcp_approval_response content block; in chat, the text answer)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI

from conformance_fixtures import agentengine_bin, server  # noqa: F401 (fixtures)
from conformance_server import MODEL, Server

TOOL_INPUT = "use the tool on paris"
TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.'
APPROVE_INPUT = "please approve deleting notes.txt"
APIS = [("responses", True), ("chat", False)]


def llm(server: Server, responses: bool) -> ChatOpenAI:
    return ChatOpenAI(model=MODEL, base_url=server.base_url, api_key="x", max_retries=0, use_responses_api=responses)  # type: ignore[arg-type]


def blocks(m: BaseMessage, kind: str) -> list[dict[str, Any]]:
    """Output items of a type, wherever this langchain-openai version keeps them."""
    found = [b for b in m.content if isinstance(b, dict) and b.get("type") == kind] if isinstance(m.content, list) else []
    found += [o for o in m.additional_kwargs.get("tool_outputs", []) if o.get("type") == kind]
    return found


@pytest.mark.parametrize(("api", "responses"), APIS)
def test_invoke(server: Server, api: str, responses: bool) -> None:
    m = llm(server, responses).invoke("hello langchain")
    assert m.text == "Echo: hello langchain"
    assert m.usage_metadata is not None and m.usage_metadata["total_tokens"] > 0


@pytest.mark.parametrize(("api", "responses"), APIS)
def test_stream(server: Server, api: str, responses: bool) -> None:
    chunks = list(llm(server, responses).stream("stream langchain please"))
    assert "".join(c.text for c in chunks) == "Echo: stream langchain please"
    assert len(chunks) > 1


@pytest.mark.parametrize(("api", "responses"), APIS)
def test_multi_turn(server: Server, api: str, responses: bool) -> None:
    first = llm(server, responses).invoke("first question")
    second = llm(server, responses).invoke([HumanMessage("first question"), AIMessage(first.text), HumanMessage("history")])
    assert second.text.startswith("History: ")
    assert "First user message: first question" in second.text


@pytest.mark.parametrize(("api", "responses"), APIS)
def test_server_side_tool(server: Server, api: str, responses: bool) -> None:
    m = llm(server, responses).invoke(TOOL_INPUT)
    assert m.tool_calls == [], "nothing for the client to run"
    assert m.text == TOOL_REPLY
    if responses:
        calls = blocks(m, "mcp_call")
        assert len(calls) == 1 and calls[0]["name"] == "lookup"
        assert '"characters":5' in calls[0]["output"]
    chunks = list(llm(server, responses).stream(TOOL_INPUT))
    assert "".join(c.text for c in chunks) == TOOL_REPLY
    assert all(not c.tool_call_chunks for c in chunks), "no tool call chunks while streaming"


def test_responses_approval_round_trip(server: Server) -> None:
    model = llm(server, True).bind_tools(
        [{"type": "mcp", "server_label": MODEL, "server_url": "http://127.0.0.1:9/unused", "require_approval": "always"}]
    )
    ask = model.invoke(APPROVE_INPUT)
    assert ask.tool_calls == []
    reqs = blocks(ask, "mcp_approval_request")
    assert len(reqs) == 1 and reqs[0]["name"] == "delete_file", ask
    answer = HumanMessage(content=[{"type": "mcp_approval_response", "approval_request_id": reqs[0]["id"], "approve": True}])
    done = model.invoke([answer], previous_response_id=ask.response_metadata["id"])
    assert done.text == "Approved: deleted notes.txt."
    calls = blocks(done, "mcp_call")
    assert len(calls) == 1 and calls[0]["approval_request_id"] == reqs[0]["id"]


def test_chat_approval_round_trip(server: Server) -> None:
    ask = llm(server, False).invoke(APPROVE_INPUT)
    assert ask.tool_calls == []
    assert "Approval required to run delete_file" in ask.text
    done = llm(server, False).invoke([HumanMessage(APPROVE_INPUT), ask, HumanMessage("approve")])
    assert done.text == "Approved: deleted notes.txt."
