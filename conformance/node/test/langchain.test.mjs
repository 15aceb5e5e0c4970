// LangChain JS (@langchain/openai ChatOpenAI, pinned in package.json) over the Responses
// API and Chat Completions: plain, streamed and multi-turn calls, a tool the server runs
// (never an AIMessage tool call, which an agent loop would run again) and an approval
// round trip with LangChain's own mechanism (a remote MCP tool's mcp_approval_request,
// answered by an mcp_approval_response content block; in chat, the text answer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { useServer, MODEL } from '../lib/fixture.mjs';

const srv = useServer();

const TOOL_INPUT = 'use the tool on paris';
const TOOL_REPLY = 'The lookup tool says "paris" has 5 characters and 1 words.';
const APPROVE_INPUT = 'please approve deleting notes.txt';

const llm = (useResponsesApi) => new ChatOpenAI({
  model: MODEL, apiKey: 'x', maxRetries: 0, useResponsesApi, configuration: { baseURL: srv.baseURL },
});

for (const [api, responses] of [['responses', true], ['chat', false]]) {
  test(`${api}: invoke`, async () => {
    const m = await llm(responses).invoke('hello langchain');
    assert.equal(m.text, 'Echo: hello langchain');
    assert.ok(m.usage_metadata?.total_tokens > 0, 'usage');
  });

  test(`${api}: stream`, async () => {
    let text = '';
    let n = 0;
    for await (const chunk of await llm(responses).stream('stream langchain please')) {
      text += chunk.text;
      n++;
    }
    assert.equal(text, 'Echo: stream langchain please');
    assert.ok(n > 1, 'streamed in several chunks');
  });

  test(`${api}: multi-turn`, async () => {
    const first = await llm(responses).invoke('first question');
    const second = await llm(responses).invoke([new HumanMessage('first question'), new AIMessage(first.text), new HumanMessage('history')]);
    assert.match(second.text, /^History: \d+ messages\. First user message: first question/);
  });

  test(`${api}: a tool the server runs is no AIMessage tool call; its result is visible`, async () => {
    const m = await llm(responses).invoke(TOOL_INPUT);
    assert.deepEqual(m.tool_calls, [], 'nothing for the client to run');
    assert.equal(m.text, TOOL_REPLY);
    if (responses) {
      const call = (m.additional_kwargs.tool_outputs ?? []).find((o) => o.type === 'mcp_call');
      assert.equal(call?.name, 'lookup');
      assert.match(call.output, /"characters":5/);
    }
    let streamed = '';
    const chunks = [];
    for await (const c of await llm(responses).stream(TOOL_INPUT)) {
      streamed += c.text;
      chunks.push(c);
    }
    assert.equal(streamed, TOOL_REPLY);
    assert.ok(chunks.every((c) => (c.tool_call_chunks ?? []).length === 0), 'no tool call chunks while streaming');
  });
}

test('responses: approval round trip (mcp_approval_request → mcp_approval_response content block)', async () => {
  const model = llm(true).bindTools([{ type: 'mcp', server_label: MODEL, server_url: 'http://127.0.0.1:9/unused', require_approval: 'always' }]);
  const ask = await model.invoke(APPROVE_INPUT);
  assert.deepEqual(ask.tool_calls, []);
  const req = (ask.additional_kwargs.tool_outputs ?? []).find((o) => o.type === 'mcp_approval_request');
  assert.equal(req?.name, 'delete_file', `tool_outputs: ${JSON.stringify(ask.additional_kwargs.tool_outputs)}`);
  const answer = new HumanMessage({ content: [{ type: 'mcp_approval_response', approval_request_id: req.id, approve: true }] });
  const done = await model.invoke([new HumanMessage(APPROVE_INPUT), ask, answer]);
  assert.equal(done.text, 'Approved: deleted notes.txt.');
  const call = (done.additional_kwargs.tool_outputs ?? []).find((o) => o.type === 'mcp_call');
  assert.equal(call?.approval_request_id, req.id);
});

test('chat: approval round trip (asked in text, answered "approve")', async () => {
  const ask = await llm(false).invoke(APPROVE_INPUT);
  assert.deepEqual(ask.tool_calls, []);
  assert.match(ask.text, /Approval required to run delete_file/);
  const done = await llm(false).invoke([new HumanMessage(APPROVE_INPUT), ask, new HumanMessage('approve')]);
  assert.equal(done.text, 'Approved: deleted notes.txt.');
});
