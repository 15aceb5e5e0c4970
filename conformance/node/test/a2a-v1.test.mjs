// The A2A JS SDK (@a2a-js/sdk, pinned in package.json) with its DEFAULT settings, which
// speak A2A 1.0 only: the agents' cards list a 1.0 JSON-RPC interface, and the client
// must pick it and work with no compat option. Card resolution, send, stream in pieces, a
// second message on the context, an approval round trip through input-required, cancel,
// get-task with historyLength. Then the same card through the SDK's 0.3 compat transport,
// so the 0.3 binding stays covered from this client too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  AgentCardResolver, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { useServer, MODEL } from '../lib/fixture.mjs';

const srv = useServer();

// The trailing slash keeps the agent's path: the card is resolved relative to it.
const agentURL = () => `${srv.origin}/a2a/${MODEL}/`;

async function connect() {
  const client = await new ClientFactory().createFromUrl(agentURL());
  assert.equal(client.protocolVersion, '1.0');
  return client;
}

const text = (value) => ({ content: { $case: 'text', value } });
const data = (value) => ({ content: { $case: 'data', value } });
const message = (parts, extra = {}) => ({ messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts, ...extra });

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

test('1.0 default client: card resolution picks the 1.0 interface', async () => {
  const card = await AgentCardResolver.default.resolve(agentURL());
  assert.equal(card.name, MODEL);
  assert.equal(card.capabilities.streaming, true);
  const v1 = card.supportedInterfaces.find((i) => i.protocolVersion === '1.0');
  assert.ok(v1, JSON.stringify(card.supportedInterfaces));
  assert.equal(v1.url, `${srv.origin}/a2a/${MODEL}`);
  assert.equal(v1.protocolBinding, 'JSONRPC');
  await connect();
});

test('1.0 default client: send', async () => {
  const client = await connect();
  const task = taskOf(await client.sendMessage({ message: message([text('hello there')]) }));
  assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(artifactText(task), 'Echo: hello there');
  assert.deepEqual(task.history.map((m) => m.role), [Role.ROLE_USER, Role.ROLE_AGENT]);
});

test('1.0 default client: stream, the text arrives in pieces', async () => {
  const client = await connect();
  const evs = await collect(client.sendMessageStream({ message: message([text('one two three four five')]) }));
  assert.equal(evs[0].$case, 'task');
  assert.equal(evs[0].value.status.state, TaskState.TASK_STATE_SUBMITTED);
  assert.equal(evs.at(-1).$case, 'statusUpdate');
  assert.equal(evs.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);
  const chunks = evs.filter((e) => e.$case === 'artifactUpdate').map((e) => e.value);
  assert.ok(chunks.length >= 5, `${chunks.length} chunks`);
  const pieces = chunks.slice(0, -1);
  assert.equal(pieces[0].append, false);
  assert.ok(pieces.slice(1).every((c) => c.append));
  assert.equal(chunkText(pieces), 'Echo: one two three four five');
  assert.ok(chunks.at(-1).lastChunk);
  assert.equal(chunkText(chunks.slice(-1)), 'Echo: one two three four five');
});

test('1.0 default client: a second message on the context sees the first', async () => {
  const client = await connect();
  const first = taskOf(await client.sendMessage({ message: message([text('remember the tulips')]) }));
  const second = taskOf(await client.sendMessage({ message: message([text('history')], { contextId: first.contextId }) }));
  assert.equal(second.contextId, first.contextId);
  assert.notEqual(second.id, first.id);
  assert.match(artifactText(second), /First user message: remember the tulips/);
});

test('1.0 default client: approval round trip through input-required', async () => {
  const client = await connect();
  const evs = await collect(client.sendMessageStream({ message: message([text('please approve deleting notes.txt')]) }));
  const end = evs.at(-1).value;
  assert.equal(end.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const requests = end.status.message.parts.filter((p) => p.content.$case === 'data').map((p) => p.content.value);
  assert.equal(requests.length, 1);
  assert.equal(requests[0].type, 'approval_request');
  assert.equal(requests[0].name, 'delete_file');
  assert.deepEqual(requests[0].arguments, { path: 'notes.txt' });
  assert.equal((await client.getTask({ id: end.taskId })).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);

  const answer = message([data({ approve: true })], { taskId: end.taskId, contextId: end.contextId });
  const done = taskOf(await client.sendMessage({ message: answer }));
  assert.equal(done.id, end.taskId);
  assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(artifactText(done), /Approved: deleted notes\.txt\.$/);
});

test('1.0 default client: cancel', async () => {
  const client = await connect();
  const task = taskOf(await client.sendMessage({
    message: message([text('a long answer')]),
    configuration: { returnImmediately: true },
    metadata: { agentengine: { model_options: { delay_ms: 20, deltas: 200 } } },
  }));
  assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status.state), `state ${task.status.state}`);
  const cancelled = await client.cancelTask({ id: task.id });
  assert.equal(cancelled.status.state, TaskState.TASK_STATE_CANCELED);
  await assert.rejects(client.cancelTask({ id: task.id }), /cancel/i);
});

test('1.0 default client: get-task with historyLength, and an unknown task', async () => {
  const client = await connect();
  const task = taskOf(await client.sendMessage({ message: message([text('use the tool on rome')]) }));
  const full = await client.getTask({ id: task.id });
  const one = await client.getTask({ id: task.id, historyLength: 1 });
  assert.equal(full.history.length, 4); // the input, the tool call, its result, the answer
  assert.equal(one.history.length, 1);
  assert.equal(one.history[0].messageId, full.history.at(-1).messageId);
  await assert.rejects(client.getTask({ id: 'task_nope' }), /not found/i);
});

test('0.3 binding: the same card through the SDK\'s compat transport', async () => {
  // A 0.3-only client: the card's 0.3 interface alone, with the SDK's 0.3 transport.
  const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
  const card = await resolver.resolve(agentURL());
  const legacy = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion !== '1.0') };
  assert.equal(legacy.supportedInterfaces.length, 1);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
    cardResolver: resolver,
  }));
  const client = await factory.createFromAgentCard(legacy);
  assert.notEqual(client.protocolVersion, '1.0');
  const task = taskOf(await client.sendMessage({ message: message([text('hello over 0.3')]) }));
  assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(artifactText(task), 'Echo: hello over 0.3');
});
