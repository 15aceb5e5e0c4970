"""Chat Completions through the official openai Python SDK, strict response validation on."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionChunk

from conformance_fixtures import agentengine_bin, client, server, two_agent_client  # noqa: F401 (fixtures)
from conformance_server import MODEL


def msgs(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def check_chunks(chunks: list[ChatCompletionChunk], usage: bool) -> tuple[str, str | None, Any]:
    assert len(chunks) >= 2
    cid = chunks[0].id
    assert cid
    roles = 0
    content = ""
    finish: str | None = None
    usage_chunk = None
    for i, c in enumerate(chunks):
        w = f"chunk #{i}"
        assert isinstance(c, ChatCompletionChunk), f"{w}: {type(c)}"
        assert c.object == "chat.completion.chunk", w
        assert c.id == cid, f"{w}: id must be the same in every chunk"
        assert c.model == MODEL, w
        if not c.choices:
            assert usage, f"{w}: choices [] without include_usage"
            assert i == len(chunks) - 1, f"{w}: usage chunk must be last"
            usage_chunk = c
            continue
        assert len(c.choices) == 1 and c.choices[0].index == 0, w
        ch = c.choices[0]
        assert finish is None, f"{w}: chunk after finish_reason"
        if ch.delta.role is not None:
            roles += 1
            assert ch.delta.role == "assistant" and i == 0, f"{w}: role only once, first"
        if ch.delta.content:
            content += ch.delta.content
        if ch.finish_reason:
            finish = ch.finish_reason
        if not usage:
            assert c.usage is None, f"{w}: usage without include_usage"
    assert roles == 1, "delta.role exactly once"
    if usage:
        assert usage_chunk is not None and usage_chunk.usage is not None, "include_usage: final usage chunk"
        u = usage_chunk.usage
        assert u.total_tokens == u.prompt_tokens + u.completion_tokens
    return content, finish, usage_chunk.usage if usage_chunk else None


def test_chat_create(client: OpenAI) -> None:
    c = client.chat.completions.create(model=MODEL, messages=msgs("hi there"))
    assert c.object == "chat.completion"
    assert c.id and isinstance(c.created, int) and c.model == MODEL
    assert len(c.choices) == 1
    ch = c.choices[0]
    assert ch.index == 0 and ch.finish_reason == "stop"
    assert ch.message.role == "assistant"
    assert ch.message.content == "Echo: hi there"
    assert c.usage is not None
    assert c.usage.total_tokens == c.usage.prompt_tokens + c.usage.completion_tokens
    assert c.usage.prompt_tokens == 2


def test_chat_history_reaches_agent(client: OpenAI) -> None:
    c = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "user", "content": "alpha beta gamma"},
            {"role": "assistant", "content": "Echo: alpha beta gamma"},
            {"role": "user", "content": "delta"},
        ],
    )
    assert c.choices[0].message.content == "Echo: delta"
    assert c.usage is not None, "c.usage missing"
    assert c.usage.prompt_tokens == 1 + 3 + 4, f"earlier messages are the turn's history: usage.prompt_tokens = {c.usage.prompt_tokens}, want 1+3+4"


def test_chat_stream(client: OpenAI) -> None:
    with client.chat.completions.create(model=MODEL, messages=msgs("stream me"), stream=True) as stream:
        chunks = list(stream)
    content, finish, _ = check_chunks(chunks, usage=False)
    assert content == "Echo: stream me"
    assert finish == "stop"


def test_chat_stream_include_usage(client: OpenAI) -> None:
    with client.chat.completions.create(
        model=MODEL, messages=msgs("count my tokens"), stream=True, stream_options={"include_usage": True}
    ) as stream:
        chunks = list(stream)
    content, _, usage = check_chunks(chunks, usage=True)
    assert content == "Echo: count my tokens"
    assert usage.prompt_tokens == 3 and usage.completion_tokens == 9  # 4 text deltas + 5 reasoning


def test_chat_stream_helper(client: OpenAI) -> None:
    text = ""
    with client.chat.completions.stream(
        model=MODEL, messages=msgs("helper chat"), stream_options={"include_usage": True}
    ) as stream:
        for e in stream:
            if e.type == "content.delta":
                text += e.delta
        final = stream.get_final_completion()
    assert text == "Echo: helper chat"
    m = final.choices[0].message
    assert m.role == "assistant"  # openai-python concatenates a repeated role ("assistantassistant")
    assert m.content == "Echo: helper chat"
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None and final.usage.total_tokens == final.usage.prompt_tokens + final.usage.completion_tokens


def test_chat_tool_input(client: OpenAI) -> None:
    with client.chat.completions.stream(model=MODEL, messages=msgs("use the tool on paris")) as stream:
        final = stream.get_final_completion()
    assert 'The lookup tool says "paris" has 5 characters and 1 words.' in (final.choices[0].message.content or "")
    assert final.choices[0].finish_reason == "stop", "the tool ran on the server; the client must not be told to run it"


def test_chat_fail(client: OpenAI) -> None:
    with pytest.raises(openai.APIError) as ei:
        client.chat.completions.create(model=MODEL, messages=msgs("fail"))
    assert "fail" in str(ei.value)
    with pytest.raises(openai.APIError):
        with client.chat.completions.create(model=MODEL, messages=msgs("fail"), stream=True) as stream:
            list(stream)


def test_chat_unknown_model(two_agent_client: OpenAI) -> None:
    # With several agents a model that names none of them is a 404.
    for stream in (False, True):
        with pytest.raises(openai.NotFoundError) as ei:
            two_agent_client.chat.completions.create(model="no-such-model", messages=msgs("hi"), stream=stream)
        assert ei.value.status_code == 404
        assert ei.value.code == "model_not_found"
        assert ei.value.type == "invalid_request_error"


def test_chat_single_agent_takes_any_model_as_override(client: OpenAI) -> None:
    r = client.chat.completions.create(model="gpt-4o-mini", messages=msgs("hello there"))
    assert r.choices[0].message.content == "Echo: hello there"


def test_chat_approval_round_trip(client: OpenAI) -> None:
    # The agent's approval request is text (never tool_calls, which ask the client to run
    # a tool); a stateless client resends the conversation with "approve".
    ask = client.chat.completions.create(model=MODEL, messages=msgs("please approve deleting notes.txt"))
    q = ask.choices[0].message
    assert ask.choices[0].finish_reason == "stop" and not q.tool_calls
    assert "Approval required to run delete_file" in (q.content or "")
    with client.chat.completions.stream(
        model=MODEL,
        messages=[*msgs("please approve deleting notes.txt"), {"role": "assistant", "content": q.content}, {"role": "user", "content": "approve"}],
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "Approved: deleted notes.txt."


def test_chat_trailing_system_message(client: OpenAI) -> None:
    c = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hello"}, {"role": "system", "content": "be brief"}])
    assert c.choices[0].message.content == "Echo: hello"
