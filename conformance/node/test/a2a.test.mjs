// The A2A JS SDK (@a2a-js/sdk, pinned in package.json) as a client of the agents' A2A
// surface, opted in to its 0.3 compat layer (legacyCompat), as clients of 0.3-only agents
// configure it: with the agents' cards listing 1.0 and 0.3, it still picks 1.0. Card
// resolution, send, stream, history on a context, an approval round trip, cancel,
// resubscribe, get-task with historyLength and per-user keys. (a2a-v1.test.mjs: the
// default client, and the 0.3 transport.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { useServer, MODEL } from '../lib/fixture.mjs';
import { startServer } from '../lib/server.mjs';

const srv = useServer();
const APPROVE_INPUT = 'please approve deleting notes.txt';

/** A client of the agent at origin; key, when set, is sent as a bearer token. */
async function connect(origin, key) {
  const fetchImpl = key
    ? (url, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('Authorization', `Bearer ${key}`);
      return fetch(url, { ...init, headers });
    }
    : fetch;
  const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true }, fetchImpl });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl })],
    cardResolver: resolver,
  }));
  // The trailing slash keeps the agent's path: the card is resolved relative to it.
  const url = `${origin}/a2a/${MODEL}/`;
  return { client: await factory.createFromUrl(url), card: await resolver.resolve(url) };
}

const text = (value) => ({ content: { $case: 'text', value } });
const data = (value) => ({ content: { $case: 'data', value } });
const message = (parts, extra = {}) => ({ messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts, ...extra });

/** The task of a send result (the SDK gives the task, or a payload holding it). */
function taskOf(result) {
  if (result?.payload?.$case === 'task') return result.payload.value;
  assert.ok(result?.id, `not a task: ${JSON.stringify(result)}`);
  return result;
}

const artifactText = (task) => task.artifacts.flatMap((a) => a.parts).map((p) => p.content?.value ?? '').join('');

const chunkText = (chunks) => chunks.flatMap((c) => c.artifact.parts).map((p) => p.content.value).join('');

async function collect(stream) {
  const out = [];
  for await (const ev of stream) out.push(ev.payload);
  return out;
}

test('card resolution', async () => {
  const { card } = await connect(srv.origin);
  assert.equal(card.name, MODEL);
  assert.equal(card.capabilities.streaming, true);
  const iface = card.supportedInterfaces.find((i) => i.url === `${srv.origin}/a2a/${MODEL}`);
  assert.ok(iface, JSON.stringify(card.supportedInterfaces));
  assert.equal(iface.protocolBinding, 'JSONRPC');
});

test('send', async () => {
  const { client } = await connect(srv.origin);
  const task = taskOf(await client.sendMessage({ message: message([text('hello there')]) }));
  assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(artifactText(task), 'Echo: hello there');
  assert.deepEqual(task.history.map((m) => m.role), [Role.ROLE_USER, Role.ROLE_AGENT]);
});

test('stream: the text arrives in pieces', async () => {
  const { client } = await connect(srv.origin);
  const evs = await collect(client.sendMessageStream({ message: message([text('one two three four five')]) }));
  assert.equal(evs[0].$case, 'task');
  assert.equal(evs.at(-1).$case, 'statusUpdate');
  assert.equal(evs.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);
  const chunks = evs.filter((e) => e.$case === 'artifactUpdate').map((e) => e.value);
  assert.ok(chunks.length >= 5, `${chunks.length} chunks`);
  const pieces = chunks.slice(0, -1);
  const last = chunks.at(-1);
  assert.equal(pieces[0].append, false);
  assert.ok(pieces.slice(1).every((c) => c.append));
  assert.ok(!pieces.some((c) => c.lastChunk));
  assert.equal(chunkText(pieces), 'Echo: one two three four five');
  // The last chunk replaces the artifact with the whole message.
  assert.ok(last.lastChunk && !last.append);
  assert.equal(chunkText([last]), 'Echo: one two three four five');
});

test('a second message on the context sees the first', async () => {
  const { client } = await connect(srv.origin);
  const first = taskOf(await client.sendMessage({ message: message([text('remember the tulips')]) }));
  const second = taskOf(await client.sendMessage({ message: message([text('history')], { contextId: first.contextId }) }));
  assert.equal(second.contextId, first.contextId);
  assert.notEqual(second.id, first.id);
  assert.match(artifactText(second), /First user message: remember the tulips/);
});

test('approval round trip through input-required', async () => {
  const { client } = await connect(srv.origin);
  const evs = await collect(client.sendMessageStream({ message: message([text(APPROVE_INPUT)]) }));
  const end = evs.at(-1).value;
  assert.equal(end.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const requests = end.status.message.parts.filter((p) => p.content.$case === 'data').map((p) => p.content.value);
  assert.equal(requests.length, 1);
  assert.equal(requests[0].type, 'approval_request');
  assert.equal(requests[0].name, 'delete_file');
  assert.deepEqual(requests[0].arguments, { path: 'notes.txt' });

  const answer = message([data({ approve: false, reason: 'keep it' })], { taskId: end.taskId, contextId: end.contextId });
  const done = await collect(client.sendMessageStream({ message: answer }));
  assert.equal(done.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);
  const task = await client.getTask({ id: end.taskId });
  assert.match(artifactText(task), /Rejected: kept notes\.txt \(keep it\)\.$/);
});

test('cancel', async () => {
  const { client } = await connect(srv.origin);
  const task = taskOf(await client.sendMessage({
    message: message([text('a long answer')]),
    configuration: { returnImmediately: true },
    metadata: { agentengine: { model_options: { delay_ms: 20, deltas: 200 } } },
  }));
  assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status.state), `state ${task.status.state}`);
  const cancelled = await client.cancelTask({ id: task.id });
  assert.equal(cancelled.status.state, TaskState.TASK_STATE_CANCELED);
});

test('resubscribe after a dropped stream', async () => {
  const { client } = await connect(srv.origin);
  const stream = client.sendMessageStream({
    message: message([text('go')]),
    metadata: { agentengine: { model_options: { delay_ms: 10, deltas: 30 } } },
  });
  const seen = [];
  for await (const ev of stream) {
    seen.push(ev.payload);
    if (seen.length === 4) break; // drops the stream
  }
  const id = seen[0].value.id;
  const evs = await collect(client.resubscribeTask({ id }));
  const chunks = evs.filter((e) => e.$case === 'artifactUpdate').map((e) => e.value);
  assert.equal(chunks.length, 31); // every delta from the start, then the whole message
  assert.equal(evs.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);
  const task = await client.getTask({ id });
  assert.equal(chunkText(chunks.slice(0, -1)), artifactText(task));
  assert.equal(chunkText(chunks.slice(-1)), artifactText(task));
});

test('get-task with historyLength', async () => {
  const { client } = await connect(srv.origin);
  const task = taskOf(await client.sendMessage({ message: message([text('use the tool on rome')]) }));
  const full = await client.getTask({ id: task.id });
  const one = await client.getTask({ id: task.id, historyLength: 1 });
  assert.equal(full.history.length, 4); // the input, the tool call, its result, the answer
  assert.equal(one.history.length, 1);
  assert.equal(one.history[0].messageId, full.history.at(-1).messageId);
});

test('per-user keys: bob cannot reach alice\'s tasks', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-keys-'));
  const alice = 'a2a-alice-key-0123456789';
  const bob = 'a2a-bob-key-0123456789ab';
  writeFileSync(path.join(dir, 'tokens'), `${alice} alice\n${bob} bob\n`);
  const keyed = await startServer({ flags: ['--tokens', path.join(dir, 'tokens')] });
  try {
    const a = await connect(keyed.origin, alice);
    const b = await connect(keyed.origin, bob);
    assert.ok(a.card.securitySchemes.bearer, JSON.stringify(a.card.securitySchemes));
    const done = taskOf(await a.client.sendMessage({ message: message([text("alice's secret")]) }));
    const waiting = taskOf(await a.client.sendMessage({ message: message([text(APPROVE_INPUT)]) }));
    assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await assert.rejects(b.client.getTask({ id: done.id }), /not found/i);
    await assert.rejects(b.client.cancelTask({ id: waiting.id }), /not found/i);
    await assert.rejects(b.client.sendMessage({ message: message([text('approve')], { taskId: waiting.id }) }), /not found/i);
    const his = taskOf(await b.client.sendMessage({ message: message([text('history')], { contextId: done.contextId }) }));
    assert.match(artifactText(his), /History: 0 messages/);
    assert.equal((await a.client.getTask({ id: waiting.id })).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  } finally {
    await keyed.stop();
  }
});

