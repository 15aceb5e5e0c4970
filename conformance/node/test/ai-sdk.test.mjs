// Vercel AI SDK (`ai` + `@ai-sdk/openai`): Responses model (openai(id)) and Chat model (openai.chat(id)).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText, tool, jsonSchema, APICallError } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { useServer, withTwoAgents, MODEL } from '../lib/fixture.mjs';

const srv = useServer();
// Created on first use: the server's address is known only once the before hook has run.
let provider;
const openai = new Proxy(function openaiProvider() {}, {
  apply: (_t, _this, args) => getProvider()(...args),
  get: (_t, prop) => getProvider()[prop],
});
function getProvider() {
  provider ??= createOpenAI({ baseURL: srv.baseURL, apiKey: 'x' });
  return provider;
}

// The tool is declared without `execute`: the call surfaces to the caller and the SDK does not
// run a second step. The echo agent runs the tool itself on the server.
const tools = {
  lookup: tool({
    description: 'Look a query up',
    inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }),
  }),
};

async function parts(result) {
  const out = [];
  for await (const p of result.fullStream) out.push(p);
  return out;
}

function noErrorParts(ps) {
  const errs = ps.filter((p) => p.type === 'error' || p.type === 'tool-error');
  assert.deepEqual(errs.map((p) => String(p.error)), [], 'error parts in fullStream');
}

for (const [name, model] of [['responses', () => openai(MODEL)], ['chat', () => openai.chat(MODEL)]]) {
  test(`${name}: generateText`, async () => {
    const r = await generateText({ model: model(), prompt: 'hello world', maxRetries: 0 });
    assert.equal(r.text, 'Echo: hello world');
    assert.equal(r.finishReason, 'stop');
    assert.ok(r.response.id, 'response.id');
    assert.equal(r.response.modelId, MODEL);
    assert.ok(r.response.timestamp instanceof Date && Math.abs(r.response.timestamp - Date.now()) < 3600_000,
      `response.timestamp ${r.response.timestamp} (created_at must be unix seconds)`);
    assert.equal(r.usage.inputTokens, 2);
    assert.equal(r.usage.outputTokens, 7);
    assert.deepEqual(r.warnings ?? [], []);
  });

  test(`${name}: streamText`, async () => {
    const result = streamText({ model: model(), prompt: 'stream it now', maxRetries: 0 });
    const ps = await parts(result);
    noErrorParts(ps);
    const types = ps.map((p) => p.type);
    assert.ok(types.includes('text-start') && types.includes('text-end'), `text part lifecycle: ${types.join(', ')}`);
    assert.ok(types.indexOf('text-start') < types.indexOf('text-delta'), 'text-start before text-delta');
    const deltas = ps.filter((p) => p.type === 'text-delta');
    assert.equal(deltas.length, 4, 'one delta per word');
    assert.equal(deltas.map((p) => p.text).join(''), 'Echo: stream it now');
    assert.equal(await result.text, 'Echo: stream it now');
    assert.equal(await result.finishReason, 'stop');
    const usage = await result.usage;
    assert.equal(usage.inputTokens, 3);
    assert.equal(types.at(-1), 'finish');
  });
}

test('stateless multi-turn (full transcript in messages) reaches the agent as history: Responses and Chat', async () => {
  const messages = [
    { role: 'user', content: 'alpha beta gamma' },
    { role: 'assistant', content: 'Echo: alpha beta gamma' },
    { role: 'user', content: 'delta' },
  ];
  for (const model of [openai(MODEL), openai.chat(MODEL)]) {
    const r = await generateText({ model, messages, maxRetries: 0 });
    assert.equal(r.text, 'Echo: delta');
    // The echo agent reports input words + history words as input tokens: 1 + 3 + 4.
    assert.equal(r.usage.inputTokens, 8, `${model.provider}: earlier messages are the turn's history`);
  }
});

test('responses: streamText surfaces reasoning as reasoning parts', async () => {
  const result = streamText({ model: openai(MODEL), prompt: 'think first', maxRetries: 0 });
  const ps = await parts(result);
  noErrorParts(ps);
  const reasoning = ps.filter((p) => p.type === 'reasoning-delta').map((p) => p.text).join('');
  assert.match(reasoning, /^Thinking about: think first/, `reasoning parts: ${JSON.stringify(ps.map((p) => p.type))}`);
  const types = ps.map((p) => p.type);
  assert.ok(types.indexOf('reasoning-start') < types.indexOf('text-start'), 'reasoning before text');
});

test('responses: tool call surfaces as a tool-call part (generateText and streamText)', async () => {
  const r = await generateText({ model: openai(MODEL), prompt: 'use the tool on paris', tools, maxRetries: 0 });
  assert.equal(r.toolCalls.length, 1, `toolCalls: ${JSON.stringify(r.toolCalls)}`);
  const call = r.toolCalls[0];
  assert.equal(call.toolName, 'lookup');
  assert.ok(call.toolCallId, 'toolCallId');
  assert.deepEqual(call.input, { query: 'paris' });
  assert.ok(!call.invalid, 'tool call parsed as valid');
  assert.match(r.text, /The lookup tool says "paris" has 5 characters and 1 words\./);

  const result = streamText({ model: openai(MODEL), prompt: 'use the tool on paris', tools, maxRetries: 0 });
  const ps = await parts(result);
  noErrorParts(ps);
  const calls = ps.filter((p) => p.type === 'tool-call');
  assert.equal(calls.length, 1, `tool-call parts: ${JSON.stringify(ps.map((p) => p.type))}`);
  assert.equal(calls[0].toolName, 'lookup');
  assert.deepEqual(calls[0].input, { query: 'paris' });
  const inputDeltas = ps.filter((p) => p.type === 'tool-input-delta').map((p) => p.delta).join('');
  assert.equal(inputDeltas, '{"query":"paris"}', 'tool-input-delta parts from function_call_arguments.delta');
});

test('chat: tool-using input streams without errors', async () => {
  const result = streamText({ model: openai.chat(MODEL), prompt: 'use the tool on paris', maxRetries: 0 });
  const ps = await parts(result);
  noErrorParts(ps);
  assert.match(await result.text, /The lookup tool says "paris"/);
});

test('responses: a failing run is an error part / rejected generateText', async () => {
  const result = streamText({ model: openai(MODEL), prompt: 'fail', maxRetries: 0, onError: () => {} });
  const ps = await parts(result);
  const err = ps.find((p) => p.type === 'error');
  assert.ok(err, `an error part: ${JSON.stringify(ps.map((p) => p.type))}`);
  assert.match(String(err.error?.message ?? JSON.stringify(err.error)), /fail/);

  await assert.rejects(generateText({ model: openai(MODEL), prompt: 'fail', maxRetries: 0 }), /fail/);
});

test('unknown model with several agents: APICallError with status 404 (Responses and Chat)', async () => {
  await withTwoAgents(async (two) => {
    const provider = createOpenAI({ baseURL: two.baseURL, apiKey: 'x' });
    for (const model of [provider('no-such-model'), provider.chat('no-such-model')]) {
      await assert.rejects(generateText({ model, prompt: 'hi', maxRetries: 0 }), (err) => {
        assert.ok(APICallError.isInstance(err), `want APICallError, got ${err?.constructor?.name}: ${err}`);
        assert.equal(err.statusCode, 404);
        assert.equal(err.isRetryable, false);
        assert.match(err.message, /no-such-model/);
        return true;
      });
    }
    const result = streamText({ model: provider('no-such-model'), prompt: 'hi', maxRetries: 0, onError: () => {} });
    const ps = await parts(result);
    const err = ps.find((p) => p.type === 'error');
    assert.ok(err && APICallError.isInstance(err.error), `streamText error part with APICallError: ${JSON.stringify(ps.map((p) => p.type))}`);
    assert.equal(err.error.statusCode, 404);
  });
});

test('a model naming no agent reaches the only agent (Responses and Chat)', async () => {
  for (const model of [openai('gpt-4o-mini'), openai.chat('gpt-4o-mini')]) {
    const r = await generateText({ model, prompt: 'hello there', maxRetries: 0 });
    assert.equal(r.text, 'Echo: hello there');
  }
});

test('responses: a tool the server runs (no client tools) is a provider-executed call with its result', async () => {
  const r = await generateText({ model: openai(MODEL), prompt: 'use the tool on paris', maxRetries: 0 });
  assert.match(r.text, /The lookup tool says "paris" has 5 characters and 1 words\./);
  const call = r.content.find((p) => p.type === 'tool-call');
  assert.equal(call?.providerExecuted, true, `content: ${JSON.stringify(r.content.map((p) => p.type))}`);
  assert.equal(call.toolName, 'mcp.lookup');
  const res = r.content.find((p) => p.type === 'tool-result');
  assert.match(String(res?.output?.output ?? JSON.stringify(res?.output)), /characters/);
});

test('responses: approval round trip with tool-approval-request / tool-approval-response', async () => {
  const prompt = [{ role: 'user', content: 'please approve deleting notes.txt' }];
  const ask = await generateText({ model: openai(MODEL), messages: prompt, maxRetries: 0 });
  const req = ask.content.find((p) => p.type === 'tool-approval-request');
  assert.ok(req, `content: ${JSON.stringify(ask.content.map((p) => p.type))}`);
  assert.equal(ask.finishReason === 'error', false);
  const messages = [...prompt, ...ask.response.messages,
    // providerExecuted: the approval goes to the provider (the server runs the tool).
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: req.approvalId, approved: true, providerExecuted: true }] }];
  const done = await generateText({ model: openai(MODEL), messages, maxRetries: 0 });
  assert.equal(done.text, 'Approved: deleted notes.txt.');
});
