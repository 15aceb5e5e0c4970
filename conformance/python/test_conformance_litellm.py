"""LiteLLM's SDK (litellm.completion and litellm.responses, provider "openai/" with api_base)
against the server: plain, streamed and multi-turn calls, a tool the server runs (never
returned as tool_calls) and an approval round trip (Responses: mcp_approval_response with
previous_response_id; chat: the text answer)."""

from __future__ import annotations

import os

# Use the cost map bundled with the package instead of downloading it at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from typing import Any  # noqa: E402

import litellm  # noqa: E402
import pytest  # noqa: E402

from conformance_fixtures import agentengine_bin, server  # noqa: E402, F401 (fixtures)
from conformance_server import MODEL, Server  # noqa: E402

TOOL_INPUT = "use the tool on paris"
TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.'
APPROVE_INPUT = "please approve deleting notes.txt"
LLM = "openai/" + MODEL


def kw(server: Server) -> dict[str, Any]:
    return {"model": LLM, "api_base": server.base_url, "api_key": "x", "num_retries": 0}


def chat(server: Server, messages: list[dict[str, Any]]) -> Any:
    return litellm.completion(messages=messages, **kw(server))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_chat_plain_and_multi_turn(server: Server) -> None:
    r = chat(server, [user("hello litellm")])
    assert r.choices[0].message.content == "Echo: hello litellm"
    assert r.usage.total_tokens > 0
    r2 = chat(server, [user("first question"), {"role": "assistant", "content": r.choices[0].message.content}, user("history")])
    assert "First user message: first question" in r2.choices[0].message.content


def test_chat_stream(server: Server) -> None:
    chunks = list(litellm.completion(messages=[user("stream litellm please")], stream=True, **kw(server)))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Echo: stream litellm please"


def test_chat_server_side_tool(server: Server) -> None:
    r = chat(server, [user(TOOL_INPUT)])
    m = r.choices[0].message
    assert not m.tool_calls, "a tool the server ran is nothing for the client to run"
    assert m.content == TOOL_REPLY
    assert r.choices[0].finish_reason == "stop"


def test_chat_approval_round_trip(server: Server) -> None:
    ask = chat(server, [user(APPROVE_INPUT)])
    q = ask.choices[0].message
    assert not q.tool_calls
    assert "Approval required to run delete_file" in q.content
    done = chat(server, [user(APPROVE_INPUT), {"role": "assistant", "content": q.content}, user("approve")])
    assert done.choices[0].message.content == "Approved: deleted notes.txt."


def out_text(r: Any) -> str:
    return "".join(c.text for i in r.output if i.type == "message" for c in i.content if c.type == "output_text")


def items(r: Any, kind: str) -> list[Any]:
    return [i for i in r.output if (i.get("type") if isinstance(i, dict) else i.type) == kind]


def field(i: Any, name: str) -> Any:
    return i.get(name) if isinstance(i, dict) else getattr(i, name)


def test_responses_plain_stream_multi_turn(server: Server) -> None:
    r = litellm.responses(input="hello litellm", **kw(server))
    assert out_text(r) == "Echo: hello litellm"
    events = list(litellm.responses(input="stream litellm please", stream=True, **kw(server)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Echo: stream litellm please"
    assert events[-1].type == "response.completed"
    r2 = litellm.responses(input="history", previous_response_id=r.id, **kw(server))
    assert "First user message: hello litellm" in out_text(r2)


def test_responses_server_side_tool(server: Server) -> None:
    r = litellm.responses(input=TOOL_INPUT, **kw(server))
    assert out_text(r) == TOOL_REPLY
    assert not items(r, "function_call")
    calls = items(r, "mcp_call")
    assert len(calls) == 1 and field(calls[0], "name") == "lookup"
    assert '"characters":5' in field(calls[0], "output")


def test_responses_approval_round_trip(server: Server) -> None:
    r = litellm.responses(input=APPROVE_INPUT, **kw(server))
    assert r.status == "completed"
    reqs = items(r, "mcp_approval_request")
    assert len(reqs) == 1 and field(reqs[0], "name") == "delete_file"
    done = litellm.responses(
        input=[{"type": "mcp_approval_response", "approval_request_id": field(reqs[0], "id"), "approve": True}],
        previous_response_id=r.id,
        **kw(server),
    )
    assert out_text(done) == "Approved: deleted notes.txt."


@pytest.mark.parametrize("text", ["hello there"])
def test_chat_trailing_system_message(server: Server, text: str) -> None:
    r = chat(server, [user(text), {"role": "system", "content": "be brief"}])
    assert r.choices[0].message.content == "Echo: " + text
