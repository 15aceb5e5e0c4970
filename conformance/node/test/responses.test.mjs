// Responses API through the official openai Node SDK (pinned in package.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { useServer, withTwoAgents, MODEL, uniq, outputText, reasoningText, postJSON, parseSSE } from '../lib/fixture.mjs';
import { checkResponseStream, checkResponseObject, checkUsage } from '../lib/stream-check.mjs';

const srv = useServer();

const TOOL_INPUT = 'use the tool on paris';
const TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.';
const APPROVE_INPUT = 'please approve deleting notes.txt';

async function collect(stream) {
  const events = [];
  for await (const e of stream) events.push(e);
  return events;
}

test('responses.create non-stream: output, ids, usage, output_text', async () => {
  const r = await srv.client.responses.create({ model: MODEL, input: 'hello world' });
  checkResponseObject(r, 'response', { model: MODEL });
  assert.equal(r.status, 'completed');
  assert.equal(r.error ?? null, null);
  assert.equal(r.output_text, 'Echo: hello world');
  const types = r.output.map((i) => i.type);
  const msgIdx = types.indexOf('message');
  const rsIdx = types.indexOf('reasoning');
  assert.ok(msgIdx >= 0, `no message item in output: ${JSON.stringify(types)}`);
  assert.ok(rsIdx >= 0 && rsIdx < msgIdx, `reasoning item must precede the message: ${JSON.stringify(types)}`);
  assert.match(reasoningText(r.output[rsIdx]), /^Thinking about: hello world/);
  const msg = r.output[msgIdx];
  assert.ok(msg.id && typeof msg.id === 'string', 'message.id');
  assert.equal(msg.role, 'assistant');
  assert.equal(msg.status, 'completed');
  assert.equal(msg.content[0].type, 'output_text');
  assert.ok(Array.isArray(msg.content[0].annotations), 'output_text.annotations must be an array');
  assert.equal(new Set(r.output.map((i) => i.id)).size, r.output.length, 'output item ids must be unique');
  checkUsage(r.usage, 'response');
  assert.equal(r.usage.input_tokens, 2, 'echo counts the input words as input tokens');
  assert.equal(r.usage.output_tokens, 7, 'echo counts a token per text delta plus its 4 reasoning tokens');
  assert.equal(r.usage.output_tokens_details.reasoning_tokens, 4, 'reasoning tokens are part of output tokens');
});

test('responses.retrieve returns the stored response; input_items lists the input; delete removes it', async () => {
  const r = await srv.client.responses.create({ model: MODEL, input: 'keep me' });
  const got = await srv.client.responses.retrieve(r.id);
  assert.equal(got.id, r.id);
  assert.equal(got.status, 'completed');
  assert.equal(got.output_text, 'Echo: keep me');
  assert.deepEqual(got.output.map((i) => i.id), r.output.map((i) => i.id), 'stored output item ids');

  const items = [];
  for await (const it of srv.client.responses.inputItems.list(r.id)) items.push(it);
  assert.ok(items.length >= 1, 'input_items is empty');
  const user = items.find((it) => it.type === 'message' && it.role === 'user');
  assert.ok(user, `no user message in input_items: ${JSON.stringify(items)}`);
  assert.ok(user.id, 'input item id');
  const text = user.content.map((c) => c.text).join('');
  assert.equal(text, 'keep me');

  await srv.client.responses.delete(r.id);
  await assert.rejects(srv.client.responses.retrieve(r.id), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError, `want NotFoundError, got ${err}`);
    assert.equal(err.status, 404);
    return true;
  });
});

test('raw stream: event order, sequence numbers, item ids, terminal response.completed', async () => {
  const stream = await srv.client.responses.create({ model: MODEL, input: 'stream this please', stream: true });
  const events = await collect(stream);
  const { terminal, response, items } = checkResponseStream(events, { model: MODEL });
  assert.equal(terminal.type, 'response.completed');
  assert.equal(events[1].type, 'response.in_progress', 'second event');
  const deltas = events.filter((e) => e.type === 'response.output_text.delta');
  assert.equal(deltas.length, 4, 'one text delta per word: "Echo: stream this please"');
  assert.equal(deltas.map((d) => d.delta).join(''), 'Echo: stream this please');
  assert.equal(outputText(response.output), 'Echo: stream this please');
  const rs = items.find((i) => i.type === 'reasoning');
  assert.ok(rs, 'a reasoning item is streamed');
  assert.match(reasoningText(rs), /^Thinking about: stream this please/);
  assert.ok(items.findIndex((i) => i.type === 'reasoning') < items.findIndex((i) => i.type === 'message'), 'reasoning before message');
  // The stream's id is the stored response's id.
  const stored = await srv.client.responses.retrieve(response.id);
  assert.equal(stored.output_text, 'Echo: stream this please');
});

test('raw SSE framing: text/event-stream, event name == data.type, no [DONE] needed, no top-level error', async () => {
  const res = await postJSON(srv.origin, '/v1/responses', { model: MODEL, input: 'framing check', stream: true });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') || '', /^text\/event-stream/);
  const blocks = parseSSE(await res.text());
  const json = blocks.filter((b) => b.json);
  for (const b of json) {
    if (b.event !== null) assert.equal(b.event, b.json.type, `event: line ${b.event} != data.type ${b.json.type}`);
    assert.ok(!('error' in b.json), `${b.json.type}: top-level "error" key`);
  }
  checkResponseStream(json.map((b) => b.json), { model: MODEL });
});

test('responses.stream() helper: strict accumulator and finalResponse()', async () => {
  const stream = srv.client.responses.stream({ model: MODEL, input: 'helper stream' });
  const seen = [];
  let deltaText = '';
  stream.on('response.output_text.delta', (e) => { deltaText += e.delta; });
  for await (const e of stream) seen.push(e);
  const final = await stream.finalResponse();
  const { terminal } = checkResponseStream(seen, { model: MODEL });
  assert.equal(terminal.type, 'response.completed');
  assert.equal(final.status, 'completed');
  assert.equal(final.output_text, 'Echo: helper stream');
  assert.equal(deltaText, 'Echo: helper stream');
  checkUsage(final.usage, 'finalResponse');
});

test('multi-turn with previous_response_id: the second turn sees the first', async () => {
  const first = await srv.client.responses.create({ model: MODEL, input: 'alpha beta gamma' });
  assert.equal(first.usage.input_tokens, 3, 'a first turn has no history');
  const second = await srv.client.responses.create({ model: MODEL, input: 'delta', previous_response_id: first.id });
  assert.equal(second.status, 'completed');
  assert.equal(second.previous_response_id, first.id, 'previous_response_id is echoed');
  assert.equal(second.output_text, 'Echo: delta');
  // The echo agent counts input words plus every history message's words as input tokens:
  // 1 ("delta") + 3 (user "alpha beta gamma") + 4 (assistant "Echo: alpha beta gamma").
  assert.equal(second.usage.input_tokens, 1 + 3 + 4, 'history seen by the second turn (input_tokens = input + history words)');

  // Session state also carries over the chain.
  const s1 = await srv.client.responses.create({ model: MODEL, input: 'state:color=blue' });
  assert.equal(s1.output_text, 'State updated: color=blue');
  const s2 = await srv.client.responses.create({ model: MODEL, input: 'state:size=9', previous_response_id: s1.id });
  assert.equal(s2.output_text, 'State updated: color=blue, size=9');
});

test('multi-turn with conversation: turns share one session', async () => {
  const conv = `conv_conformance_${uniq()}`;
  const first = await srv.client.responses.create({ model: MODEL, input: 'alpha beta gamma', conversation: conv });
  assert.equal(first.status, 'completed');
  assert.equal(first.conversation?.id, conv, 'response.conversation.id');
  assert.equal(first.usage.input_tokens, 3, 'a new conversation has no history');
  const second = await srv.client.responses.create({ model: MODEL, input: 'delta', conversation: { id: conv } });
  assert.equal(second.conversation?.id, conv);
  assert.notEqual(second.id, first.id);
  assert.equal(second.output_text, 'Echo: delta');
  assert.equal(second.usage.input_tokens, 1 + 3 + 4, 'history seen by the second turn (input_tokens = input + history words)');

  const s1 = await srv.client.responses.create({ model: MODEL, input: 'state:color=blue', conversation: conv });
  assert.equal(s1.output_text, 'State updated: color=blue');
  const s2 = await srv.client.responses.create({ model: MODEL, input: 'state:size=9', conversation: conv });
  assert.equal(s2.output_text, 'State updated: color=blue, size=9');

  // Another conversation does not see it.
  const other = await srv.client.responses.create({ model: MODEL, input: 'state:size=1', conversation: `${conv}_other` });
  assert.equal(other.output_text, 'State updated: size=1');

  const items = [];
  for await (const it of srv.client.responses.inputItems.list(second.id)) items.push(it);
  assert.ok(items.some((it) => it.type === 'message' && it.role === 'user' && it.content.map((c) => c.text).join('') === 'delta'),
    `input_items of the second turn lack its input: ${JSON.stringify(items)}`);
});

test('conversation and previous_response_id together are rejected with 400', async () => {
  const first = await srv.client.responses.create({ model: MODEL, input: 'one' });
  await assert.rejects(
    srv.client.responses.create({ model: MODEL, input: 'two', previous_response_id: first.id, conversation: 'conv_x' }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `want BadRequestError, got ${err}`);
      assert.equal(err.status, 400);
      assert.equal(typeof err.error?.message, 'string');
      return true;
    },
  );
});

// A tool the agent runs itself is OpenAI's hosted-tool item, mcp_call (server_label = the
// agent), with its output: no client executes it. function_call would mean "client, run this".
function mcpCall(output) {
  const calls = output.filter((i) => i.type === 'mcp_call');
  assert.equal(calls.length, 1, `one mcp_call item: ${JSON.stringify(output.map((i) => i.type))}`);
  assert.ok(!output.some((i) => i.type === 'function_call'), 'no function_call for a server-side tool');
  return calls[0];
}

test('server-side tool: mcp_call item with name, JSON arguments and output, then the answer', async () => {
  const r = await srv.client.responses.create({ model: MODEL, input: TOOL_INPUT });
  assert.equal(r.status, 'completed');
  const mc = mcpCall(r.output);
  assert.ok(typeof mc.id === 'string' && mc.id.length > 0, 'mcp_call.id');
  assert.equal(mc.server_label, MODEL, 'server_label is the agent');
  assert.equal(mc.name, 'lookup');
  assert.deepEqual(JSON.parse(mc.arguments), { query: 'paris' });
  assert.equal(mc.status, 'completed');
  assert.equal(mc.error ?? null, null);
  assert.deepEqual(JSON.parse(mc.output), { query: 'paris', characters: 5, words: 1, upper: 'PARIS' });
  assert.equal(r.output_text, TOOL_REPLY);
  assert.ok(r.output.indexOf(mc) < r.output.findIndex((i) => i.type === 'message'), 'call before the answer');
});

test('server-side tool streamed: mcp_call events, and the responses.stream() helper', async () => {
  const events = await collect(await srv.client.responses.create({ model: MODEL, input: TOOL_INPUT, stream: true }));
  const { response, items } = checkResponseStream(events, { model: MODEL });
  assert.ok(items.find((i) => i.type === 'mcp_call'), 'mcp_call item streamed');
  const types = events.map((e) => e.type);
  for (const t of ['response.mcp_call.in_progress', 'response.mcp_call_arguments.delta', 'response.mcp_call_arguments.done', 'response.mcp_call.completed']) {
    assert.ok(types.includes(t), `${t} streamed`);
  }
  assert.equal(events.filter((e) => e.type === 'response.mcp_call_arguments.delta').map((d) => d.delta).join(''), '{"query":"paris"}');
  assert.equal(outputText(response.output), TOOL_REPLY);
  assert.match(mcpCall(response.output).output, /"characters":5/);

  const helper = srv.client.responses.stream({ model: MODEL, input: TOOL_INPUT });
  const helperEvents = await collect(helper);
  checkResponseStream(helperEvents, { model: MODEL });
  const final = await helper.finalResponse();
  assert.equal(final.status, 'completed');
  assert.equal(mcpCall(final.output).name, 'lookup');
  assert.equal(final.output_text, TOOL_REPLY);
});

test('KsADK switch (X-AgentEngine-Compat: ksadk): function_call items and incomplete approvals', async () => {
  const headers = { 'X-AgentEngine-Compat': 'ksadk' };
  const r = await srv.client.responses.create({ model: MODEL, input: TOOL_INPUT }, { headers });
  const fc = r.output.find((i) => i.type === 'function_call');
  assert.equal(fc?.name, 'lookup');
  assert.ok(!r.output.some((i) => i.type === 'mcp_call'));
  const a = await srv.client.responses.create({ model: MODEL, input: APPROVE_INPUT }, { headers });
  assert.equal(a.status, 'incomplete');
  assert.equal(a.incomplete_details?.reason, 'approval_required');
  // KsADK's own stream: data without type/sequence_number, the bare response on lifecycle events.
  const res = await fetch(`${srv.baseURL}/responses`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ model: MODEL, input: 'hello ksadk', stream: true }),
  });
  const evs = parseSSE(await res.text());
  assert.equal(evs[0].event, 'response.created');
  assert.equal(evs[0].json.object, 'response');
  assert.ok(evs.every((e) => !('type' in e.json) && !('sequence_number' in e.json)), 'KsADK data carries no type/sequence_number');
  assert.equal(evs.at(-1).event, 'response.completed');
  assert.equal(evs.at(-1).json.output_text, 'Echo: hello ksadk');
});

function approvalItem(r) {
  const reqs = r.output.filter((i) => i.type === 'mcp_approval_request');
  assert.equal(reqs.length, 1, `one mcp_approval_request: ${JSON.stringify(r.output.map((i) => i.type))}`);
  const a = reqs[0];
  assert.match(a.id, /^apr_/, 'mcp_approval_request.id is the approval id');
  assert.equal(a.name, 'delete_file');
  assert.equal(a.server_label, MODEL, 'mcp_approval_request.server_label is the agent');
  assert.equal(typeof a.arguments, 'string');
  assert.deepEqual(JSON.parse(a.arguments), { path: 'notes.txt' });
  assert.equal(r.output.indexOf(a), r.output.length - 1, 'the approval request is the last output item');
  assert.ok(!r.output.some((i) => i.type === 'function_call' || i.type === 'mcp_call'), 'the guarded call has not run');
  return a;
}

// As OpenAI does: a turn waiting on an approval ends completed with mcp_approval_request items.
test('approval request ends the response completed (non-stream status, stream terminal event)', async () => {
  const r = await srv.client.responses.create({ model: MODEL, input: APPROVE_INPUT });
  approvalItem(r);
  assert.equal(r.status, 'completed', 'non-stream: response.status of a run waiting for approval');
  assert.equal(r.incomplete_details ?? null, null);
  const events = await collect(await srv.client.responses.create({ model: MODEL, input: APPROVE_INPUT, stream: true }));
  const { terminal } = checkResponseStream(events, { model: MODEL });
  assert.equal(terminal.type, 'response.completed', 'stream: terminal event of a run waiting for approval');
});

test('approval round trip via previous_response_id: mcp_approval_request → mcp_approval_response → mcp_call', async () => {
  const first = await srv.client.responses.create({ model: MODEL, input: APPROVE_INPUT });
  const a = approvalItem(first);
  assert.equal(first.output_text, 'I need your approval to delete notes.txt.');
  const second = await srv.client.responses.create({
    model: MODEL,
    previous_response_id: first.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: a.id, approve: true }],
  });
  assert.equal(second.status, 'completed');
  assert.equal(second.output_text, 'Approved: deleted notes.txt.');
  const mc = mcpCall(second.output);
  assert.equal(mc.approval_request_id, a.id, 'the call that needed approval names it');
  assert.deepEqual(JSON.parse(mc.arguments), { path: 'notes.txt' });
  // The approval was consumed: answering it again is an error, not a second deletion.
  await assert.rejects(srv.client.responses.create({
    model: MODEL,
    previous_response_id: second.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: a.id, approve: true }],
  }), (err) => {
    assert.ok(err instanceof OpenAI.APIError && err.status >= 400 && err.status < 500, `want a 4xx APIError, got ${err}`);
    return true;
  });
});

test('approval round trip via conversation, streamed, rejecting; helper finalResponse() on an approval', async () => {
  const conv = `conv_conformance_${uniq()}`;
  const events = await collect(await srv.client.responses.create({ model: MODEL, input: APPROVE_INPUT, conversation: conv, stream: true }));
  const { response } = checkResponseStream(events, { model: MODEL });
  const a = approvalItem(response);
  const ev2 = await collect(await srv.client.responses.create({
    model: MODEL,
    conversation: conv,
    input: [{ type: 'mcp_approval_response', approval_request_id: a.id, approve: false, reason: 'keep it' }],
    stream: true,
  }));
  const c2 = checkResponseStream(ev2, { model: MODEL });
  assert.equal(c2.terminal.type, 'response.completed');
  assert.equal(outputText(c2.response.output), 'Rejected: kept notes.txt (keep it).');

  // openai-node's helper resolves with the completed approval response.
  const h = srv.client.responses.stream({ model: MODEL, input: APPROVE_INPUT });
  const final = await h.finalResponse();
  assert.equal(final.status, 'completed');
  const a3 = approvalItem(final);
  const h2 = srv.client.responses.stream({
    model: MODEL,
    previous_response_id: final.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: a3.id, approve: true }],
  });
  const third = await h2.finalResponse();
  assert.equal(third.status, 'completed');
  assert.equal(third.output_text, 'Approved: deleted notes.txt.');
});

test('failing run, non-stream: status failed with error {code, message}', async () => {
  const r = await srv.client.responses.create({ model: MODEL, input: 'fail' });
  assert.equal(r.status, 'failed');
  assert.ok(r.error, 'response.error');
  assert.equal(typeof r.error.code, 'string');
  assert.match(r.error.message, /failing because the input was "fail"/);
});

test('failing run, stream: error event then response.failed; SDK raises APIError', async () => {
  // Wire level: error event (flat fields + sequence_number), then response.failed, then end.
  const res = await postJSON(srv.origin, '/v1/responses', { model: MODEL, input: 'fail', stream: true });
  assert.equal(res.status, 200);
  const events = parseSSE(await res.text()).filter((b) => b.json).map((b) => b.json);
  const { terminal } = checkResponseStream(events, { model: MODEL });
  assert.equal(terminal.type, 'response.failed');
  const errIdx = events.findIndex((e) => e.type === 'error');
  assert.ok(errIdx >= 0, `an error event before response.failed: ${events.map((e) => e.type).join(', ')}`);
  assert.equal(errIdx, events.length - 2, 'error event immediately precedes response.failed');
  assert.match(events[errIdx].message, /failing because the input was "fail"/);

  // The SDK's raw iterator throws APIError on the error event.
  const stream = await srv.client.responses.create({ model: MODEL, input: 'fail', stream: true });
  await assert.rejects(collect(stream), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `want APIError, got ${err?.constructor?.name}: ${err}`);
    assert.match(String(err.message), /fail/);
    return true;
  });
  // So does the helper.
  await assert.rejects(srv.client.responses.stream({ model: MODEL, input: 'fail' }).finalResponse(), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `want APIError, got ${err?.constructor?.name}: ${err}`);
    return true;
  });
});

test('unknown model with several agents: NotFoundError 404 naming them (stream and non-stream)', async () => {
  await withTwoAgents(async (two) => {
    for (const stream of [false, true]) {
      await assert.rejects(two.client.responses.create({ model: 'no-such-model', input: 'hi', stream }), (err) => {
        assert.ok(err instanceof OpenAI.NotFoundError, `stream=${stream}: want NotFoundError, got ${err?.constructor?.name}: ${err}`);
        assert.equal(err.status, 404);
        assert.equal(err.type, 'invalid_request_error', `stream=${stream}: error.type`);
        assert.equal(err.code, 'model_not_found', `stream=${stream}: error.code`);
        assert.match(err.message, /no-such-model/);
        assert.match(err.message, /echo-go.*echo-twin/);
        return true;
      });
    }
    const raw = await postJSON(two.origin, '/v1/responses', { model: 'no-such-model', input: 'hi' });
    assert.equal(raw.status, 404);
    assert.match(raw.headers.get('content-type') || '', /^application\/json/);
    const body = await raw.json();
    for (const k of ['message', 'type', 'param', 'code']) assert.ok(k in body.error, `error envelope lacks ${k}: ${JSON.stringify(body)}`);
  });
});

test('a model naming no agent reaches the only agent as its model override', async () => {
  const r = await srv.client.responses.create({ model: 'gpt-4o-mini', input: 'hello there' });
  assert.equal(r.status, 'completed');
  assert.equal(outputText(r.output), 'Echo: hello there');
});

test('models.list includes the agent', async () => {
  const ids = [];
  for await (const m of srv.client.models.list()) {
    assert.equal(m.object, 'model');
    ids.push(m.id);
  }
  assert.ok(ids.includes(MODEL), `models: ${JSON.stringify(ids)}`);
});
