// Chat Completions through the official openai Node SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { useServer, withTwoAgents, MODEL, postJSON, parseSSE } from '../lib/fixture.mjs';

const srv = useServer();

const msgs = (text) => [{ role: 'user', content: text }];

function checkChunks(chunks, { usage }) {
  assert.ok(chunks.length >= 2, `too few chunks: ${chunks.length}`);
  const id = chunks[0].id;
  assert.ok(typeof id === 'string' && id.length > 0, 'chunk id');
  let roles = 0;
  let content = '';
  let finish = null;
  let usageChunk = null;
  chunks.forEach((c, i) => {
    const where = `chunk #${i}`;
    assert.equal(c.object, 'chat.completion.chunk', `${where}: object`);
    assert.equal(c.id, id, `${where}: id must be the same in every chunk`);
    assert.equal(c.model, MODEL, `${where}: model`);
    assert.ok(Number.isInteger(c.created), `${where}: created`);
    assert.ok(!('error' in c), `${where}: top-level "error" key (openai-go ends the stream on it)`);
    if (c.choices.length === 0) {
      assert.ok(usage, `${where}: a choices:[] chunk without stream_options.include_usage (naive clients index choices[0])`);
      assert.equal(i, chunks.length - 1, `${where}: the usage chunk must be last`);
      usageChunk = c;
      return;
    }
    assert.equal(c.choices.length, 1, `${where}: one choice`);
    const ch = c.choices[0];
    assert.equal(ch.index, 0, `${where}: choice index`);
    assert.ok(finish === null, `${where}: content chunk after finish_reason`);
    if (ch.delta.role !== undefined) {
      roles += 1;
      assert.equal(ch.delta.role, 'assistant', `${where}: delta.role`);
      assert.equal(i, 0, `${where}: role only in the first chunk (openai-python concatenates repeated roles)`);
    }
    if (typeof ch.delta.content === 'string') content += ch.delta.content;
    if (ch.finish_reason) finish = ch.finish_reason;
    if (!usage) assert.ok(c.usage === undefined || c.usage === null, `${where}: usage without include_usage`);
  });
  assert.equal(roles, 1, 'delta.role "assistant" exactly once, in the first chunk');
  assert.ok(finish, 'a chunk with finish_reason');
  if (usage) {
    assert.ok(usageChunk, 'stream_options.include_usage: a final chunk with choices [] and usage');
    const u = usageChunk.usage;
    for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) assert.ok(Number.isInteger(u[k]), `usage.${k}`);
    assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens, 'usage.total_tokens');
  } else {
    assert.equal(usageChunk, null);
  }
  return { content, finish, usage: usageChunk?.usage };
}

test('chat.completions.create non-stream', async () => {
  const c = await srv.client.chat.completions.create({ model: MODEL, messages: msgs('hi there') });
  assert.equal(c.object, 'chat.completion');
  assert.ok(typeof c.id === 'string' && c.id.length > 0, 'id');
  assert.ok(Number.isInteger(c.created), 'created');
  assert.equal(c.model, MODEL);
  assert.equal(c.choices.length, 1);
  const ch = c.choices[0];
  assert.equal(ch.index, 0);
  assert.equal(ch.finish_reason, 'stop');
  assert.ok('logprobs' in ch, 'choice.logprobs (nullable, spec-required)');
  assert.equal(ch.message.role, 'assistant');
  assert.equal(ch.message.content, 'Echo: hi there');
  assert.ok('refusal' in ch.message, 'message.refusal (nullable, spec-required)');
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) assert.ok(Number.isInteger(c.usage?.[k]), `usage.${k}`);
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
});

test('chat history in messages reaches the agent', async () => {
  const c = await srv.client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'user', content: 'alpha beta gamma' },
      { role: 'assistant', content: 'Echo: alpha beta gamma' },
      { role: 'user', content: 'delta' },
    ],
  });
  assert.equal(c.choices[0].message.content, 'Echo: delta');
  // The echo agent reports input words + history words as prompt tokens.
  assert.equal(c.usage.prompt_tokens, 1 + 3 + 4, 'earlier messages are the turn\'s history');
});

test('chat.completions.create stream: chunk shape, role once, finish_reason, [DONE], no usage unless asked', async () => {
  const stream = await srv.client.chat.completions.create({ model: MODEL, messages: msgs('stream me'), stream: true });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const { content, finish } = checkChunks(chunks, { usage: false });
  assert.equal(content, 'Echo: stream me');
  assert.equal(finish, 'stop');

  const res = await postJSON(srv.origin, '/v1/chat/completions', { model: MODEL, messages: msgs('raw'), stream: true });
  assert.match(res.headers.get('content-type') || '', /^text\/event-stream/);
  const blocks = parseSSE(await res.text());
  assert.equal(blocks.at(-1).data, '[DONE]', 'chat streams end with data: [DONE]');
  assert.ok(blocks.every((b) => b.event === null), 'chat chunks carry no event: line');
});

test('chat stream with stream_options.include_usage: final choices:[] chunk with usage', async () => {
  const stream = await srv.client.chat.completions.create({
    model: MODEL, messages: msgs('count my tokens'), stream: true, stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const { content, usage } = checkChunks(chunks, { usage: true });
  assert.equal(content, 'Echo: count my tokens');
  assert.equal(usage.prompt_tokens, 3);
  assert.equal(usage.completion_tokens, 9, '4 text deltas + 5 reasoning tokens');
});

test('chat.completions.stream() helper: finalChatCompletion()', async () => {
  const stream = srv.client.chat.completions.stream({
    model: MODEL, messages: msgs('helper chat'), stream_options: { include_usage: true },
  });
  let text = '';
  stream.on('content', (delta) => { text += delta; });
  const final = await stream.finalChatCompletion();
  assert.equal(text, 'Echo: helper chat');
  assert.equal(final.choices[0].message.role, 'assistant');
  assert.equal(final.choices[0].message.content, 'Echo: helper chat');
  assert.equal(final.choices[0].finish_reason, 'stop');
  assert.equal(final.usage?.total_tokens, final.usage.prompt_tokens + final.usage.completion_tokens);
  assert.equal(await stream.finalContent(), 'Echo: helper chat');
});

test('chat with the tool-using input: the strict stream helper accepts what the server sends', async () => {
  const stream = srv.client.chat.completions.stream({ model: MODEL, messages: msgs('use the tool on paris') });
  const final = await stream.finalChatCompletion();
  const m = final.choices[0].message;
  assert.equal(m.role, 'assistant');
  assert.match(m.content ?? '', /The lookup tool says "paris" has 5 characters and 1 words\./);
  const c = await srv.client.chat.completions.create({ model: MODEL, messages: msgs('use the tool on paris') });
  assert.match(c.choices[0].message.content ?? '', /The lookup tool says "paris"/);
  // The tool already ran on the server: a client must not be told to run it (finish_reason tool_calls).
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.equal(final.choices[0].finish_reason, 'stop');
});

test('chat failing run: APIError (non-stream HTTP error, stream error chunk)', async () => {
  await assert.rejects(srv.client.chat.completions.create({ model: MODEL, messages: msgs('fail') }), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `want APIError, got ${err?.constructor?.name}: ${err}`);
    assert.ok(err.status >= 500, `non-stream failure status ${err.status}`);
    assert.match(err.message, /fail/);
    return true;
  });
  const stream = await srv.client.chat.completions.create({ model: MODEL, messages: msgs('fail'), stream: true });
  await assert.rejects((async () => { for await (const _ of stream) { /* drain */ } })(), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `want APIError, got ${err?.constructor?.name}: ${err}`);
    assert.match(err.message, /fail/);
    return true;
  });
});

test('chat unknown model with several agents: NotFoundError 404', async () => {
  await withTwoAgents(async (two) => {
    for (const stream of [false, true]) {
      await assert.rejects(two.client.chat.completions.create({ model: 'no-such-model', messages: msgs('hi'), stream }), (err) => {
        assert.ok(err instanceof OpenAI.NotFoundError, `stream=${stream}: want NotFoundError, got ${err?.constructor?.name}: ${err}`);
        assert.equal(err.status, 404);
        assert.equal(err.type, 'invalid_request_error');
        assert.equal(err.code, 'model_not_found');
        return true;
      });
    }
  });
});

test('chat: a model naming no agent reaches the only agent as its model override', async () => {
  const r = await srv.client.chat.completions.create({ model: 'gpt-4o-mini', messages: msgs('hello there') });
  assert.equal(r.choices[0].message.content, 'Echo: hello there');
});

test('chat approval round trip: asked in text (never tool_calls), answered with "approve" by a stateless client', async () => {
  const ask = await srv.client.chat.completions.create({ model: MODEL, messages: msgs('please approve deleting notes.txt') });
  const q = ask.choices[0].message;
  assert.equal(ask.choices[0].finish_reason, 'stop');
  assert.equal(q.tool_calls ?? undefined, undefined, 'a server-side approval is not a client tool call');
  assert.match(q.content, /Approval required to run delete_file .*\(approval id apr_[0-9a-f]+\)/);
  // The client resends the conversation (no session id) with the answer.
  const stream = srv.client.chat.completions.stream({
    model: MODEL,
    messages: [...msgs('please approve deleting notes.txt'), { role: 'assistant', content: q.content }, { role: 'user', content: 'approve' }],
  });
  const final = await stream.finalChatCompletion();
  assert.equal(final.choices[0].message.content, 'Approved: deleted notes.txt.');
  assert.equal(final.choices[0].finish_reason, 'stop');
});

test('chat accepts a message list that ends with a system message', async () => {
  const c = await srv.client.chat.completions.create({
    model: MODEL, messages: [{ role: 'user', content: 'hello' }, { role: 'system', content: 'be brief' }],
  });
  assert.equal(c.choices[0].message.content, 'Echo: hello');
});
