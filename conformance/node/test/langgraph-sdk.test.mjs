// LangGraph's JS client, @langchain/langgraph-sdk, against agentengine's LangGraph server API,
// serving examples/langgraph-chat (its offline model answers "You said: …", calls
// send_email — which waits for approval through interrupt() — for "send an email to X").
// The project runs on the test Python ($AGENTENGINE_PYTHON, else $PYTHON).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startServer, REPO_ROOT } from '../lib/server.mjs';

const GRAPH = 'langgraph-chat';
const ctx = {};

before(async () => {
  const project = path.join(mkdtempSync(path.join(tmpdir(), 'lg-')), GRAPH);
  cpSync(path.join(REPO_ROOT, 'examples', GRAPH), project, {
    recursive: true,
    filter: (src) => !/(^|\/)(\.venv|venv|\.agentengine|__pycache__)(\/|$)/.test(path.relative(REPO_ROOT, src)),
  });
  const python = process.env.AGENTENGINE_PYTHON || process.env.PYTHON || 'python3';
  appendFileSync(path.join(project, 'agentengine.yaml'), `\npython: ${python}\n`);
  const srv = await startServer({ projects: [project] });
  Object.assign(ctx, srv);
  ctx.client = new Client({ apiUrl: srv.origin, apiKey: null });
});
after(async () => {
  if (ctx.stop) await ctx.stop();
});

const said = (values) => values.messages.map((m) => [m.type, typeof m.content === 'string' ? m.content : '']);

test('assistants and threads', async () => {
  const found = await ctx.client.assistants.search();
  assert.deepEqual(found.map((a) => a.assistant_id), [GRAPH]);
  const thread = await ctx.client.threads.create({ metadata: { suite: 'js' } });
  assert.equal(thread.status, 'idle');
  const got = await ctx.client.threads.search({ metadata: { suite: 'js' } });
  assert.deepEqual(got.map((t) => t.thread_id), [thread.thread_id]);
  await ctx.client.threads.delete(thread.thread_id);
  await assert.rejects(ctx.client.threads.get(thread.thread_id), (err) => err.status === 404);
});

test('a streamed run, a second run on the thread, state and history', async () => {
  const thread = await ctx.client.threads.create();
  const parts = [];
  for await (const part of ctx.client.runs.stream(thread.thread_id, GRAPH, {
    input: { messages: [{ role: 'user', content: 'hello js' }] },
    streamMode: ['values', 'messages-tuple', 'updates'],
  })) parts.push(part);
  assert.equal(parts[0].event, 'metadata');
  const tokens = parts.filter((p) => p.event === 'messages' && p.data[0].type === 'AIMessageChunk').map((p) => p.data[0].content);
  assert.ok(tokens.length > 1);
  assert.equal(tokens.join(''), 'You said: hello js');
  assert.ok(parts.some((p) => p.event === 'updates' && p.data.model), 'the model node\'s update');
  const values = parts.filter((p) => p.event === 'values').map((p) => p.data);
  assert.deepEqual(said(values.at(-1)), [['human', 'hello js'], ['ai', 'You said: hello js']]);

  const out = await ctx.client.runs.wait(thread.thread_id, GRAPH, { input: { messages: [{ role: 'user', content: 'again' }] } });
  assert.deepEqual(said(out).map(([type]) => type), ['human', 'ai', 'human', 'ai']);
  const state = await ctx.client.threads.getState(thread.thread_id);
  assert.deepEqual(state.values, out);
  const history = await ctx.client.threads.getHistory(thread.thread_id);
  assert.equal(history.length, 2);
  assert.deepEqual(said(history[1].values), said(values.at(-1)));
});

test('an interrupt resumed with a command', async () => {
  const thread = await ctx.client.threads.create();
  const paused = await ctx.client.runs.wait(thread.thread_id, GRAPH, { input: { messages: [{ role: 'user', content: 'send an email to dave' }] } });
  assert.equal(paused.__interrupt__[0].value.name, 'send_email');
  assert.equal((await ctx.client.threads.get(thread.thread_id)).status, 'interrupted');
  const state = await ctx.client.threads.getState(thread.thread_id);
  assert.equal(state.interrupts[0].id, paused.__interrupt__[0].id);
  const parts = [];
  for await (const part of ctx.client.runs.stream(thread.thread_id, GRAPH, { command: { resume: true }, streamMode: 'values' })) parts.push(part);
  const last = parts.at(-1).data.messages;
  assert.ok(last.some((m) => m.type === 'tool' && m.content.includes('Email sent to dave@example.com')), JSON.stringify(last));
  assert.equal((await ctx.client.threads.get(thread.thread_id)).status, 'idle');
});

test('join, join stream and a stateless run', async () => {
  const thread = await ctx.client.threads.create();
  const run = await ctx.client.runs.create(thread.thread_id, GRAPH, { input: { messages: [{ role: 'user', content: 'in the background' }] } });
  const out = await ctx.client.runs.join(thread.thread_id, run.run_id);
  assert.deepEqual(said(out).at(-1), ['ai', 'You said: in the background']);
  const parts = [];
  for await (const part of ctx.client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: 'values' })) parts.push(part);
  assert.deepEqual(said(parts.at(-1).data).at(-1), ['ai', 'You said: in the background']);
  assert.equal((await ctx.client.runs.get(thread.thread_id, run.run_id)).status, 'success');

  const stateless = await ctx.client.runs.wait(null, GRAPH, { input: { messages: [{ role: 'user', content: 'no thread' }] } });
  assert.deepEqual(said(stateless), [['human', 'no thread'], ['ai', 'You said: no thread']]);
});

test('state updates, copies, time travel and the forwarded stream modes', async () => {
  const { client } = ctx;
  const thread = await client.threads.create();
  const tid = thread.thread_id;
  const parts = [];
  for await (const part of client.runs.stream(tid, GRAPH, {
    input: { messages: [{ role: 'user', content: 'first' }] },
    streamMode: ['tasks', 'checkpoints'],
  })) parts.push(part);
  assert.deepEqual(parts.filter((p) => p.event === 'tasks' && 'input' in p.data).map((p) => p.data.name), ['model']);
  const cps = parts.filter((p) => p.event === 'checkpoints').map((p) => p.data);
  assert.ok(cps.length > 0 && cps.every((c) => c.config.configurable.thread_id === tid));
  const first = (await client.threads.getState(tid)).checkpoint;

  // update_state, computed by the graph: the model node's message joins the thread.
  const out = await client.threads.updateState(tid, { values: { messages: [{ type: 'ai', content: 'a note' }] }, asNode: 'model' });
  const state = await client.threads.getState(tid);
  assert.equal(out.checkpoint.checkpoint_id, state.checkpoint.checkpoint_id);
  assert.equal(state.metadata.source, 'update');
  assert.deepEqual(said(state.values).at(-1), ['ai', 'a note']);

  const copy = await client.threads.copy(tid);
  assert.notEqual(copy.thread_id, tid);
  assert.deepEqual(said(copy.values), said(state.values));

  // A run from the first checkpoint forks the thread there.
  const forked = await client.runs.wait(tid, GRAPH, { input: { messages: [{ role: 'user', content: 'instead' }] }, checkpointId: first.checkpoint_id });
  assert.deepEqual(said(forked), [['human', 'first'], ['ai', 'You said: first'], ['human', 'instead'], ['ai', 'You said: instead']]);
  const history = await client.threads.getHistory(tid);
  assert.equal(history[0].parent_checkpoint.checkpoint_id, first.checkpoint_id);
  assert.equal(history.length, 3);
});
