// Per-test-file fixture: one fresh server, an OpenAI client and the AI SDK provider for it.
import { before, after } from 'node:test';
import OpenAI from 'openai';
import path from 'node:path';
import { startServer, MODEL, REPO_ROOT, TWIN_PROJECT, TWIN_MODEL } from './server.mjs';

export { MODEL, TWIN_MODEL };

/**
 * Registers before/after hooks that start and stop a server for the current test file.
 * The returned object is filled in by the before hook.
 * @returns {{origin:string, baseURL:string, client:OpenAI, logs:()=>string}}
 */
export function useServer() {
  const ctx = {};
  before(async () => {
    const srv = await startServer();
    Object.assign(ctx, srv);
    ctx.client = new OpenAI({ baseURL: srv.baseURL, apiKey: 'x', maxRetries: 0, timeout: 30_000 });
  });
  after(async () => {
    if (ctx.stop) await ctx.stop();
  });
  return ctx;
}

/**
 * Runs fn with a server hosting two agents (echo-go and echo-twin) and an OpenAI client
 * for it, for tests of what only several agents do (a model naming neither is a 404).
 * @param {(srv: {origin:string, baseURL:string, client:OpenAI}) => Promise<void>} fn
 */
export async function withTwoAgents(fn) {
  const srv = await startServer({ projects: [path.join(REPO_ROOT, 'examples', 'echo-go'), TWIN_PROJECT] });
  try {
    await fn({ ...srv, client: new OpenAI({ baseURL: srv.baseURL, apiKey: 'x', maxRetries: 0, timeout: 30_000 }) });
  } finally {
    await srv.stop();
  }
}

/** A short random suffix so ids chosen by the tests never collide across runs. */
export function uniq() {
  return Math.random().toString(36).slice(2, 10);
}

/** Text of every output_text part in a Responses output list, in order. */
export function outputText(output) {
  let s = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content) if (part.type === 'output_text') s += part.text;
  }
  return s;
}

/** Text of a reasoning item: its summary and/or raw reasoning content. */
export function reasoningText(item) {
  const parts = [...(item.summary || []), ...(item.content || [])];
  return parts.map((p) => p.text).join('');
}

/** POST a JSON body and return the raw fetch Response (for wire-level checks). */
export function postJSON(origin, path, body) {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

/**
 * Parse an SSE body into blocks {event, data(raw string), json}. Comment lines are dropped.
 * Fails on a block that has no data line (clients choke on it).
 */
export function parseSSE(text) {
  const blocks = [];
  for (const raw of text.split(/\r?\n\r?\n/)) {
    const lines = raw.split(/\r?\n/).filter((l) => l !== '' && !l.startsWith(':'));
    if (lines.length === 0) continue;
    let event = null;
    const data = [];
    for (const l of lines) {
      if (l.startsWith('event:')) event = l.slice(6).trim();
      else if (l.startsWith('data:')) data.push(l.slice(5).replace(/^ /, ''));
      else if (l.startsWith('id:') || l.startsWith('retry:')) continue;
      else throw new Error(`unexpected SSE line: ${JSON.stringify(l)}`);
    }
    if (data.length === 0) throw new Error(`SSE block without data: ${JSON.stringify(raw)}`);
    const d = data.join('\n');
    blocks.push({ event, data: d, json: d === '[DONE]' ? null : JSON.parse(d) });
  }
  return blocks;
}
