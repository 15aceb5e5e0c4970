"""Conversations API through the official openai Python SDK, strict response validation on."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIConversationsSession, OpenAIResponsesModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI, OpenAI

from conformance_fixtures import agentengine_bin, client, server  # noqa: F401 (fixtures)
from conformance_server import MODEL, Server

set_tracing_disabled(True)  # no trace export: the tests stay on loopback


def text_of(item: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(item, "content", None) or [])


def test_conversation_continues_and_lists_both_turns(client: OpenAI) -> None:
    conv = client.conversations.create(metadata={"topic": "demo"}, items=[{"type": "message", "role": "user", "content": "alpha beta"}])
    assert conv.object == "conversation" and conv.id.startswith("conv_") and conv.created_at > 0
    assert conv.metadata == {"topic": "demo"}

    first = client.responses.create(model=MODEL, input="gamma", conversation=conv.id)
    assert first.conversation is not None and first.conversation.id == conv.id
    assert first.usage is not None and first.usage.input_tokens == 2 + 1, "the created item is history"
    second = client.responses.create(model=MODEL, input="delta", conversation=conv.id)
    assert second.output_text == "Echo: delta"
    assert second.usage is not None and second.usage.input_tokens == 2 + 1 + 2 + 1, "the first turn is history"

    items = list(client.conversations.items.list(conv.id, order="asc"))
    users = [text_of(i) for i in items if i.type == "message" and getattr(i, "role", None) == "user"]
    assert users == ["alpha beta", "gamma", "delta"], users
    listed = {i.id: i for i in items}
    for r in (first, second):
        for out in r.output:
            assert out.id in listed, f"output item {out.id} of {r.id} not listed"
            assert listed[out.id].type == out.type
    assert [i.id for i in items][-1] == second.output[-1].id

    # Default order is newest first; the SDK pages with after.
    page = client.conversations.items.list(conv.id, limit=2)
    assert [i.id for i in page.data] == [i.id for i in reversed(items)][:2]
    assert page.has_more
    assert [i.id for i in page] == [i.id for i in reversed(items)], "auto-paging walks every item"

    got = client.conversations.items.retrieve(items[0].id, conversation_id=conv.id)
    assert got.id == items[0].id and text_of(got) == "alpha beta"
    added = client.conversations.items.create(conv.id, items=[{"type": "message", "role": "user", "content": "epsilon"}])
    assert len(added.data) == 1 and added.first_id == added.data[0].id
    after_delete = client.conversations.items.delete(added.data[0].id, conversation_id=conv.id)
    assert after_delete.id == conv.id and after_delete.object == "conversation"

    updated = client.conversations.update(conv.id, metadata={"stage": "two"})
    assert updated.metadata == {"stage": "two"}
    assert client.conversations.retrieve(conv.id).metadata == {"stage": "two"}

    deleted = client.conversations.delete(conv.id)
    assert deleted.id == conv.id and deleted.deleted and deleted.object == "conversation.deleted"
    with pytest.raises(openai.NotFoundError) as ei:
        client.conversations.retrieve(conv.id)
    assert ei.value.status_code == 404
    body = ei.value.body
    assert isinstance(body, dict) and body.get("code") == "not_found", body
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.list(conv.id).data


def test_conversation_bad_input_is_400(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as ei:
        client.conversations.create(items=[{"type": "message", "role": "system", "content": "no"}])
    assert ei.value.status_code == 400
    conv = client.conversations.create()
    assert conv.metadata == {}
    with pytest.raises(openai.BadRequestError):
        client.conversations.items.list(conv.id, order="sideways")  # type: ignore[arg-type]


def test_agents_sdk_conversations_session(server: Server) -> None:
    """The Agents SDK's OpenAIConversationsSession keeps a run's items in a conversation of
    this server and feeds them to the next run."""

    async def go() -> None:
        async with AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30.0) as c:
            session = OpenAIConversationsSession(openai_client=c)
            agent: Agent[Any] = Agent(name="conformance", instructions="Be brief.", model=OpenAIResponsesModel(model=MODEL, openai_client=c))
            first = await Runner.run(agent, "use the tool on paris", session=session)
            assert first.final_output == 'The lookup tool says "paris" has 5 characters and 1 words.'
            second = await Runner.run(agent, "delta", session=session)
            assert second.final_output == "Echo: delta"
            usage = second.context_wrapper.usage
            assert usage.input_tokens > 1, "the first run reached the second as history"
            items = await session.get_items()
            types = [i.get("type", "message") if isinstance(i, dict) else getattr(i, "type", "") for i in items]
            assert "mcp_call" in types and types.count("message") >= 4, types
            popped = await session.pop_item()
            assert popped is not None
            assert len(await session.get_items()) == len(items) - 1
            await session.clear_session()

    asyncio.run(go())
