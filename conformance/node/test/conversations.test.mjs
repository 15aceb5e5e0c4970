// Conversations API through the official openai Node SDK (pinned in package.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Agent, OpenAIConversationsSession, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import { useServer, MODEL } from '../lib/fixture.mjs';

const srv = useServer();

const textOf = (item) => (item.content || []).map((c) => c.text ?? '').join('');

test('conversations.create → responses.create(conversation) twice → items.list shows both turns; delete makes it 404', async () => {
  const conv = await srv.client.conversations.create({
    metadata: { topic: 'demo' },
    items: [{ type: 'message', role: 'user', content: 'alpha beta' }],
  });
  assert.equal(conv.object, 'conversation');
  assert.match(conv.id, /^conv_/);
  assert.ok(conv.created_at > 0);
  assert.deepEqual(conv.metadata, { topic: 'demo' });

  const first = await srv.client.responses.create({ model: MODEL, input: 'gamma', conversation: conv.id });
  assert.equal(first.conversation?.id, conv.id);
  assert.equal(first.usage.input_tokens, 2 + 1, 'the created item is history');
  const second = await srv.client.responses.create({ model: MODEL, input: 'delta', conversation: { id: conv.id } });
  assert.equal(second.output_text, 'Echo: delta');
  assert.equal(second.usage.input_tokens, 2 + 1 + 2 + 1, 'the first turn is history');

  const items = [];
  for await (const it of srv.client.conversations.items.list(conv.id, { order: 'asc', limit: 3 })) items.push(it);
  const users = items.filter((i) => i.type === 'message' && i.role === 'user').map(textOf);
  assert.deepEqual(users, ['alpha beta', 'gamma', 'delta']);
  const listed = new Map(items.map((i) => [i.id, i]));
  for (const r of [first, second]) {
    for (const out of r.output) {
      assert.ok(listed.has(out.id), `output item ${out.id} of ${r.id} not listed`);
      assert.deepEqual(listed.get(out.id), out, 'listed as the response returned it');
    }
  }

  const newest = await srv.client.conversations.items.list(conv.id, { limit: 1 });
  assert.equal(newest.data[0].id, second.output.at(-1).id, 'newest first by default');
  assert.equal(newest.has_more, true);

  const got = await srv.client.conversations.items.retrieve(items[0].id, { conversation_id: conv.id });
  assert.equal(textOf(got), 'alpha beta');
  const afterDelete = await srv.client.conversations.items.delete(items[0].id, { conversation_id: conv.id });
  assert.equal(afterDelete.id, conv.id);
  const third = await srv.client.responses.create({ model: MODEL, input: 'epsilon', conversation: conv.id });
  assert.equal(third.usage.input_tokens, second.usage.input_tokens + 2 + 1 - 2, 'a deleted item is no longer history');

  const updated = await srv.client.conversations.update(conv.id, { metadata: { stage: 'two' } });
  assert.deepEqual(updated.metadata, { stage: 'two' });

  const deleted = await srv.client.conversations.delete(conv.id);
  assert.deepEqual(deleted, { id: conv.id, object: 'conversation.deleted', deleted: true });
  await assert.rejects(srv.client.conversations.retrieve(conv.id), (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.error?.code === 'not_found');
  await assert.rejects(srv.client.conversations.items.list(conv.id), (e) => e instanceof OpenAI.NotFoundError);
});

test('conversations: bad input is a 400 in the error envelope', async () => {
  await assert.rejects(
    srv.client.conversations.create({ items: [{ type: 'message', role: 'system', content: 'no' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.error?.param === 'items[0].role',
  );
  const conv = await srv.client.conversations.create();
  assert.deepEqual(conv.metadata, {});
  await assert.rejects(srv.client.conversations.items.list(conv.id, { limit: 0 }), (e) => e instanceof OpenAI.BadRequestError);
});

test('@openai/agents OpenAIConversationsSession keeps the runs in a conversation of this server', async () => {
  setTracingDisabled(true); // no trace export: the tests stay on loopback
  const client = new OpenAI({ baseURL: srv.baseURL, apiKey: 'x', maxRetries: 0, timeout: 30_000 });
  setDefaultOpenAIClient(client);
  setOpenAIAPI('responses');
  const session = new OpenAIConversationsSession({ client });
  const agent = new Agent({ name: 'conformance', instructions: 'Be brief.', model: MODEL });
  const first = await run(agent, 'use the tool on paris', { session });
  assert.equal(first.finalOutput, 'The lookup tool says "paris" has 5 characters and 1 words.');
  const second = await run(agent, 'delta', { session });
  assert.equal(second.finalOutput, 'Echo: delta');
  assert.ok(second.state.usage.inputTokens > 1, 'the first run reached the second as history');
  const items = await session.getItems();
  const types = items.map((i) => i.type ?? 'message');
  assert.ok(types.includes('hosted_tool_call') || types.includes('mcp_call'), JSON.stringify(types));
  assert.ok(types.filter((t) => t === 'message').length >= 4, JSON.stringify(types));
  assert.ok(await session.popItem());
  assert.equal((await session.getItems()).length, items.length - 1);
  await session.clearSession();
});
