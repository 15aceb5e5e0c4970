"""Responses API through the official openai Python SDK, strict response validation on."""

from __future__ import annotations

import json
from typing import Any

import httpx2 as httpx  # the transport openai 3.x is built on
import openai
import pytest
from openai import OpenAI
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFailedEvent,
    ResponseTextDeltaEvent,
)

from conformance_fixtures import agentengine_bin, client, conv_id, server, two_agent_client  # noqa: F401 (fixtures)
from conformance_checks import as_dict, check_response_object, check_response_stream, check_usage, output_text, reasoning_text
from conformance_server import MODEL, Server

TOOL_INPUT = "use the tool on paris"
TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.'
APPROVE_INPUT = "please approve deleting notes.txt"


def approval_item(r: dict[str, Any]) -> dict[str, Any]:
    reqs = [i for i in r["output"] if i["type"] == "mcp_approval_request"]
    assert len(reqs) == 1, f"one mcp_approval_request: {[i['type'] for i in r['output']]}"
    a = reqs[0]
    assert a["id"].startswith("apr_")
    assert a["name"] == "delete_file"
    assert a.get("server_label") == MODEL, "server_label is the agent"
    assert json.loads(a["arguments"]) == {"path": "notes.txt"}
    assert r["output"][-1]["id"] == a["id"], "the approval request is the last output item"
    return a


def test_create_non_stream(client: OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="hello world")
    d = as_dict(r)
    check_response_object(d, "response", MODEL)
    assert r.status == "completed"
    assert r.error is None
    assert r.output_text == "Echo: hello world"
    types = [i.type for i in r.output]
    assert "message" in types and "reasoning" in types, types
    assert types.index("reasoning") < types.index("message"), types
    assert reasoning_text(d["output"][types.index("reasoning")]).startswith("Thinking about: hello world")
    msg = r.output[types.index("message")]
    assert msg.id and msg.role == "assistant" and msg.status == "completed"
    assert msg.content[0].type == "output_text" and msg.content[0].annotations == []
    assert len({i.id for i in r.output}) == len(r.output), "unique item ids"
    check_usage(d.get("usage"), "response")
    assert r.usage is not None
    assert r.usage.input_tokens == 2
    assert r.usage.output_tokens == 7  # 3 text deltas + 4 reasoning tokens
    assert r.usage.output_tokens_details.reasoning_tokens == 4


def test_retrieve_input_items_delete(client: OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="keep me")
    got = client.responses.retrieve(r.id)
    assert got.id == r.id and got.status == "completed"
    assert got.output_text == "Echo: keep me"
    assert [i.id for i in got.output] == [i.id for i in r.output]
    items = list(client.responses.input_items.list(r.id))
    users = [i for i in items if i.type == "message" and getattr(i, "role", None) == "user"]
    assert users, f"no user message in input_items: {items}"
    assert "".join(getattr(c, "text", "") for c in users[0].content) == "keep me"
    client.responses.delete(r.id)
    with pytest.raises(openai.NotFoundError) as ei:
        client.responses.retrieve(r.id)
    assert ei.value.status_code == 404


def test_raw_stream_typed_events(client: OpenAI) -> None:
    with client.responses.create(model=MODEL, input="stream this please", stream=True) as stream:
        events = list(stream)
    assert isinstance(events[0], ResponseCreatedEvent)
    assert isinstance(events[-1], ResponseCompletedEvent)
    assert events[1].type == "response.in_progress"
    res = check_response_stream(events, MODEL)
    deltas = [e for e in events if isinstance(e, ResponseTextDeltaEvent)]
    assert [d.delta for d in deltas] == ["Echo: ", "stream ", "this ", "please"]
    assert output_text(res["response"]["output"]) == "Echo: stream this please"
    assert events[-1].response.output_text == "Echo: stream this please"
    rs = [i for i in res["items"] if i["type"] == "reasoning"]
    assert rs and reasoning_text(rs[0]).startswith("Thinking about: stream this please")


def test_stream_helper_get_final_response(client: OpenAI) -> None:
    text = ""
    with client.responses.stream(model=MODEL, input="helper stream") as stream:
        events = []
        for e in stream:
            events.append(e)
            if e.type == "response.output_text.delta":
                text += e.delta
        final = stream.get_final_response()
    assert check_response_stream(events, MODEL, compare_items=False)["terminal"]["type"] == "response.completed"
    assert text == "Echo: helper stream"
    assert final.status == "completed"
    assert final.output_text == "Echo: helper stream"
    check_usage(as_dict(final).get("usage"), "get_final_response")


def test_previous_response_id_multi_turn(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="alpha beta gamma")
    assert first.usage is not None, "first.usage missing"
    assert first.usage.input_tokens == 3, f"a first turn has no history: usage.input_tokens = {first.usage.input_tokens}, want 3"
    second = client.responses.create(model=MODEL, input="delta", previous_response_id=first.id)
    assert second.status == "completed"
    assert second.previous_response_id == first.id
    assert second.output_text == "Echo: delta"
    # echo counts input words + history words: 1 + 3 (user) + 4 (assistant "Echo: alpha beta gamma")
    assert second.usage is not None, "second.usage missing"
    assert second.usage.input_tokens == 1 + 3 + 4, f"the second turn sees the first: usage.input_tokens = {second.usage.input_tokens}, want 1+3+4"

    s1 = client.responses.create(model=MODEL, input="state:color=blue")
    assert s1.output_text == "State updated: color=blue"
    s2 = client.responses.create(model=MODEL, input="state:size=9", previous_response_id=s1.id)
    assert s2.output_text == "State updated: color=blue, size=9"


def test_conversation_multi_turn(client: OpenAI, conv_id: str) -> None:
    first = client.responses.create(model=MODEL, input="alpha beta gamma", conversation=conv_id)
    assert first.conversation is not None and first.conversation.id == conv_id
    assert first.usage is not None, "first.usage missing"
    assert first.usage.input_tokens == 3, f"a first turn has no history: usage.input_tokens = {first.usage.input_tokens}, want 3"
    second = client.responses.create(model=MODEL, input="delta", conversation={"id": conv_id})
    assert second.conversation is not None and second.conversation.id == conv_id
    assert second.id != first.id
    assert second.output_text == "Echo: delta"
    assert second.usage is not None, "second.usage missing"
    assert second.usage.input_tokens == 1 + 3 + 4, f"the second turn sees the first: usage.input_tokens = {second.usage.input_tokens}, want 1+3+4"

    client.responses.create(model=MODEL, input="state:color=blue", conversation=conv_id)
    s2 = client.responses.create(model=MODEL, input="state:size=9", conversation=conv_id)
    assert s2.output_text == "State updated: color=blue, size=9"
    other = client.responses.create(model=MODEL, input="state:size=1", conversation=conv_id + "_other")
    assert other.output_text == "State updated: size=1"

    items = list(client.responses.input_items.list(second.id))
    assert any(
        i.type == "message" and getattr(i, "role", None) == "user" and "".join(getattr(c, "text", "") for c in i.content) == "delta"
        for i in items
    ), items


def test_stateless_transcript_reaches_agent_as_history(client: OpenAI) -> None:
    r = client.responses.create(
        model=MODEL,
        input=[
            {"role": "user", "content": "alpha beta gamma"},
            {"role": "assistant", "content": "Echo: alpha beta gamma"},
            {"role": "user", "content": "delta"},
        ],
    )
    assert r.output_text == "Echo: delta"
    assert r.usage is not None, "r.usage missing"
    assert r.usage.input_tokens == 1 + 3 + 4, f"earlier input messages are the turn's history: usage.input_tokens = {r.usage.input_tokens}, want 1+3+4"


def test_conversation_with_previous_response_id_is_400(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="one")
    with pytest.raises(openai.BadRequestError) as ei:
        client.responses.create(model=MODEL, input="two", previous_response_id=first.id, conversation="conv_x")
    assert ei.value.status_code == 400


def mcp_call(output: list[Any]) -> Any:
    """The one mcp_call of an output: a tool the agent ran itself (no client runs it)."""
    calls = [i for i in output if i.type == "mcp_call"]
    assert len(calls) == 1, [i.type for i in output]
    assert not any(i.type == "function_call" for i in output), "no function_call for a server-side tool"
    return calls[0]


def test_server_side_tool(client: OpenAI) -> None:
    r = client.responses.create(model=MODEL, input=TOOL_INPUT)
    assert r.status == "completed"
    mc = mcp_call(r.output)
    assert mc.id and mc.server_label == MODEL and mc.name == "lookup"
    assert json.loads(mc.arguments) == {"query": "paris"}
    assert mc.status == "completed" and mc.error is None
    assert json.loads(mc.output or "") == {"query": "paris", "characters": 5, "words": 1, "upper": "PARIS"}
    assert r.output_text == TOOL_REPLY


def test_server_side_tool_streamed(client: OpenAI) -> None:
    with client.responses.create(model=MODEL, input=TOOL_INPUT, stream=True) as stream:
        events = list(stream)
    res = check_response_stream(events, MODEL)
    types = [e.type for e in events]
    for t in ("response.mcp_call.in_progress", "response.mcp_call_arguments.done", "response.mcp_call.completed"):
        assert t in types, t
    assert "".join(e.delta for e in events if e.type == "response.mcp_call_arguments.delta") == '{"query":"paris"}'
    assert output_text(res["response"]["output"]) == TOOL_REPLY

    with client.responses.stream(model=MODEL, input=TOOL_INPUT) as helper:
        final = helper.get_final_response()
    assert mcp_call(final.output).name == "lookup"
    assert final.output_text == TOOL_REPLY


def test_ksadk_switch(server: Server) -> None:
    # KsADK's shapes for clients written against KsADK (not for strict OpenAI clients:
    # its incomplete_details.reason is outside OpenAI's enum): function_call items, an
    # approval pause incomplete, and KsADK's own stream.
    hdr = {"X-AgentEngine-Compat": "ksadk"}
    with httpx.Client(timeout=30, headers=hdr) as h:
        r = h.post(server.base_url + "/responses", json={"model": MODEL, "input": TOOL_INPUT}).json()
        assert [i["type"] for i in r["output"] if i["type"] != "message"] == ["function_call"]
        a = h.post(server.base_url + "/responses", json={"model": MODEL, "input": APPROVE_INPUT}).json()
        assert a["status"] == "incomplete" and a["incomplete_details"]["reason"] == "approval_required"
        raw = h.post(server.base_url + "/responses", json={"model": MODEL, "input": "hello ksadk", "stream": True}).text
    data = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    assert data[0]["object"] == "response" and data[0]["status"] == "in_progress"
    assert all("type" not in d and "sequence_number" not in d for d in data)
    assert data[-1]["status"] == "completed" and data[-1]["output_text"] == "Echo: hello ksadk"


def test_approval_request_ends_completed(client: OpenAI) -> None:
    # As OpenAI does: a turn waiting on an approval ends completed, the
    # mcp_approval_request items in output; the guarded call has not run.
    r = client.responses.create(model=MODEL, input=APPROVE_INPUT)
    approval_item(as_dict(r))
    assert r.status == "completed", f"non-stream status of a run waiting for approval: {r.status}"
    assert r.incomplete_details is None
    with client.responses.create(model=MODEL, input=APPROVE_INPUT, stream=True) as stream:
        events = list(stream)
    assert check_response_stream(events, MODEL)["terminal"]["type"] == "response.completed"
    assert isinstance(events[-1], ResponseCompletedEvent)


def test_approval_round_trip_previous_response_id(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input=APPROVE_INPUT)
    a = approval_item(as_dict(first))
    assert first.output_text == "I need your approval to delete notes.txt."
    second = client.responses.create(
        model=MODEL,
        previous_response_id=first.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": a["id"], "approve": True}],
    )
    assert second.status == "completed"
    assert second.output_text == "Approved: deleted notes.txt."
    mc = mcp_call(second.output)
    assert mc.approval_request_id == a["id"] and json.loads(mc.arguments) == {"path": "notes.txt"}


def test_approval_round_trip_stream_helper(client: OpenAI) -> None:
    # responses.stream(...).get_final_response() needs response.completed: the approval
    # pause must not end incomplete.
    with client.responses.stream(model=MODEL, input=APPROVE_INPUT) as helper:
        first = helper.get_final_response()
    a = approval_item(as_dict(first))
    with client.responses.stream(
        model=MODEL,
        previous_response_id=first.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": a["id"], "approve": True}],
    ) as helper2:
        second = helper2.get_final_response()
    assert second.output_text == "Approved: deleted notes.txt."


def test_approval_round_trip_conversation_streamed(client: OpenAI, conv_id: str) -> None:
    with client.responses.create(model=MODEL, input=APPROVE_INPUT, conversation=conv_id, stream=True) as stream:
        events = list(stream)
    res = check_response_stream(events, MODEL)
    a = approval_item(res["response"])
    with client.responses.create(
        model=MODEL,
        conversation=conv_id,
        input=[{"type": "mcp_approval_response", "approval_request_id": a["id"], "approve": False, "reason": "keep it"}],
        stream=True,
    ) as stream2:
        ev2 = list(stream2)
    res2 = check_response_stream(ev2, MODEL)
    assert res2["terminal"]["type"] == "response.completed"
    assert output_text(res2["response"]["output"]) == "Rejected: kept notes.txt (keep it)."


def test_fail_non_stream(client: OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="fail")
    assert r.status == "failed"
    assert r.error is not None
    assert isinstance(r.error.code, str)
    assert 'failing because the input was "fail"' in r.error.message


def test_fail_stream(client: OpenAI, server: Server) -> None:
    # Wire level first: error event, then response.failed as the terminal event.
    with httpx.Client(timeout=30) as h:
        raw = h.post(server.base_url + "/responses", json={"model": MODEL, "input": "fail", "stream": True})
    assert raw.status_code == 200
    evs = [json.loads(line[5:]) for line in raw.text.splitlines() if line.startswith("data:") and line[5:].strip() != "[DONE]"]
    res = check_response_stream(evs, MODEL)
    assert res["terminal"]["type"] == "response.failed"
    assert evs[-2]["type"] == "error", [e["type"] for e in evs]

    # The SDK either raises APIError (nested error object) or yields a typed error event
    # followed by ResponseFailedEvent (flat error event); both are valid client behaviour.
    try:
        with client.responses.create(model=MODEL, input="fail", stream=True) as stream:
            events = list(stream)
    except openai.APIError as e:
        assert "fail" in str(e)
    else:
        assert events[-2].type == "error"
        assert isinstance(events[-1], ResponseFailedEvent)


def test_unknown_model_not_found(two_agent_client: OpenAI) -> None:
    # With several agents a model that names none of them is a 404 listing them.
    for stream in (False, True):
        with pytest.raises(openai.NotFoundError) as ei:
            two_agent_client.responses.create(model="no-such-model", input="hi", stream=stream)
        err = ei.value
        assert err.status_code == 404
        assert err.type == "invalid_request_error", f"stream={stream}: error.type = {err.type!r}"
        assert err.code == "model_not_found", f"stream={stream}: error.code = {err.code!r}"
        assert "no-such-model" in err.message
        assert "echo-go" in err.message and "echo-twin" in err.message, err.message
    assert two_agent_client.responses.create(model="echo-twin", input="twin").output_text == "Echo: twin"


def test_single_agent_takes_any_model_as_override(client: OpenAI) -> None:
    # With one agent, a model naming no agent (a client's default, say) reaches that agent
    # as its model override instead of failing.
    r = client.responses.create(model="gpt-4o-mini", input="hello there")
    assert r.status == "completed"
    assert r.output_text == "Echo: hello there"


def test_models_list(client: OpenAI) -> None:
    ids = [m.id for m in client.models.list()]
    assert MODEL in ids
