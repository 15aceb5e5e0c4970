// The OpenAI Agents SDK for JS (@openai/agents, pinned in package.json) with the agent
// served as a model: plain, streamed and multi-turn runs, a tool the server runs
// (mcp_call: the SDK must not look it up locally) and approval round trips with the
// SDK's own mechanisms (hosted MCP tool with onApproval, and run interruptions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  Agent, run, hostedMcpTool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, user,
} from '@openai/agents';
import { useServer, MODEL } from '../lib/fixture.mjs';

const srv = useServer();

const TOOL_INPUT = 'use the tool on paris';
const TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.';
const APPROVE_INPUT = 'please approve deleting notes.txt';

setTracingDisabled(true); // no trace export: the tests stay on loopback

// useApi points the SDK at the test server (known once the server has started) and
// selects the OpenAI API it speaks.
function useApi(api) {
  setDefaultOpenAIClient(new OpenAI({ baseURL: srv.baseURL, apiKey: 'x', maxRetries: 0, timeout: 30_000 }));
  setOpenAIAPI(api);
}

const agent = (tools = []) => new Agent({ name: 'conformance', instructions: 'Be brief.', model: MODEL, tools });

// The agent's approval requests carry server_label = the agent: the hosted MCP tool
// the client declares under that label handles them.
const approvals = (opts = {}) => hostedMcpTool({ serverLabel: MODEL, serverUrl: 'http://127.0.0.1:9/unused', requireApproval: 'always', ...opts });

for (const api of ['responses', 'chat_completions']) {
  test(`${api}: plain run`, async () => {
    useApi(api);
    const r = await run(agent(), 'hello agents');
    assert.equal(r.finalOutput, 'Echo: hello agents');
  });

  test(`${api}: streamed run`, async () => {
    useApi(api);
    const r = await run(agent(), 'stream agents please', { stream: true });
    let text = '';
    for await (const ev of r) {
      if (ev.type === 'raw_model_stream_event' && ev.data.type === 'output_text_delta') text += ev.data.delta;
    }
    await r.completed;
    assert.equal(text, 'Echo: stream agents please');
    assert.equal(r.finalOutput, 'Echo: stream agents please');
  });

  test(`${api}: multi-turn (the SDK resends the history)`, async () => {
    useApi(api);
    const first = await run(agent(), 'first question');
    const second = await run(agent(), [...first.history, user('history')]);
    assert.match(second.finalOutput, /^History: \d+ messages\. First user message: first question/);
  });

  test(`${api}: a tool the server runs is not run by the SDK, its result is visible`, async () => {
    useApi(api);
    const r = await run(agent(), TOOL_INPUT);
    assert.equal(r.finalOutput, TOOL_REPLY);
    if (api === 'responses') {
      const calls = r.newItems.filter((i) => i.type === 'tool_call_item');
      assert.equal(calls.length, 1, `tool items: ${JSON.stringify(r.newItems.map((i) => i.type))}`);
      const raw = calls[0].rawItem;
      assert.equal(raw.type, 'hosted_tool_call', 'a hosted (server-run) call, not a function call');
      assert.equal(raw.providerData?.type ?? raw.name, 'mcp_call');
      assert.equal(raw.providerData?.name, 'lookup');
      assert.equal(raw.providerData?.server_label, MODEL);
      assert.match(String(raw.output ?? raw.providerData?.output), /"characters":5/);
      assert.ok(!r.newItems.some((i) => i.type === 'tool_call_output_item'), 'the SDK executed nothing');
    }
  });
}

test('responses: approval with the hosted MCP tool onApproval callback', async () => {
  useApi('responses');
  const seen = [];
  const tool = approvals({
    onApproval: async (_ctx, item) => {
      seen.push(item.rawItem.name);
      return { approve: true };
    },
  });
  const r = await run(agent([tool]), APPROVE_INPUT);
  assert.deepEqual(seen, ['delete_file']);
  assert.equal(r.finalOutput, 'Approved: deleted notes.txt.');
});

test('responses: approval with run interruptions (reject, then a fresh approve)', async () => {
  useApi('responses');
  const a = agent([approvals()]);
  let r = await run(a, APPROVE_INPUT);
  assert.equal(r.interruptions.length, 1, 'the approval request interrupts the run');
  assert.equal(r.interruptions[0].rawItem.name, 'delete_file');
  r.state.reject(r.interruptions[0]);
  r = await run(a, r.state);
  assert.match(r.finalOutput, /^Rejected: kept notes\.txt/);

  r = await run(a, APPROVE_INPUT, { stream: true });
  for await (const _ of r) { /* drain */ }
  await r.completed;
  assert.equal(r.interruptions.length, 1);
  r.state.approve(r.interruptions[0]);
  r = await run(a, r.state);
  assert.equal(r.finalOutput, 'Approved: deleted notes.txt.');
});

test('chat_completions: approval asked in text, answered "approve"', async () => {
  useApi('chat_completions');
  const first = await run(agent(), APPROVE_INPUT);
  assert.match(first.finalOutput, /Approval required to run delete_file/);
  const second = await run(agent(), [...first.history, user('approve')]);
  assert.equal(second.finalOutput, 'Approved: deleted notes.txt.');
});
