// Starts a fresh agentengine server (memory session backend) for one test file and
// stops it afterwards, also when the test file fails or the process exits early.
//
// AGENTENGINE_BIN: a prebuilt agentengine binary; without it the binary is built from
// the repository with `go build` (incremental, so a second build is a quick link).
// AGENTENGINE_PROJECT: the agent project to serve (default: examples/echo-go);
// startServer({ projects: [...] }) serves several.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const MODEL = 'echo-go';
// A second Go agent (the echo agent under another name) for tests that need two agents.
export const TWIN_PROJECT = path.join(REPO_ROOT, 'conformance', 'echo-twin');
export const TWIN_MODEL = 'echo-twin';

const START_DEADLINE_MS = Number(process.env.AGENTENGINE_START_TIMEOUT_MS || 120_000);
const STOP_GRACE_MS = 10_000;

let builtBinary;

export function agentengineBinary() {
  if (process.env.AGENTENGINE_BIN) return path.resolve(process.env.AGENTENGINE_BIN);
  if (builtBinary) return builtBinary;
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'agentengine-conformance-')), 'agentengine');
  execFileSync('go', ['build', '-o', out, './cmd/agentengine'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CGO_ENABLED: process.env.CGO_ENABLED || '1' },
  });
  builtBinary = out;
  return out;
}

const live = new Set();
process.on('exit', () => {
  // Last resort (uncaught error, process.exit): the server runs in its own process group.
  for (const child of live) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

/**
 * Start a server and wait until GET /health answers {"status":"ok"}.
 * @param {{projects?: string[], flags?: string[]}} [opts] the projects to serve (default: one,
 *   see above) and extra flags of `agentengine run` (e.g. --tokens FILE)
 * @returns {Promise<{origin:string, baseURL:string, logs:()=>string, stop:()=>Promise<void>}>}
 */
export async function startServer({ projects, flags = [] } = {}) {
  const bin = agentengineBinary();
  const served = projects ?? [process.env.AGENTENGINE_PROJECT || path.join(REPO_ROOT, 'examples', 'echo-go')];
  const args = ['run', ...served, '--port', '0', '--session-backend', 'memory', ...flags];
  const child = spawn(bin, args, {
    cwd: REPO_ROOT,
    detached: true, // own process group: stop() signals the whole group
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let log = '';
  const append = (chunk) => { log += chunk.toString(); };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => { live.delete(child); resolve({ code, signal }); }));

  const stop = async () => {
    if (!live.has(child)) return;
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    let timer;
    const killed = new Promise((resolve) => {
      timer = setTimeout(() => {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
        resolve();
      }, STOP_GRACE_MS);
    });
    await Promise.race([exited, killed]);
    clearTimeout(timer);
    await exited;
  };

  try {
    const deadline = Date.now() + START_DEADLINE_MS;
    const origin = await waitForListen(child, () => log, exited, deadline);
    await waitForHealth(origin, exited, () => log, deadline);
    return { origin, baseURL: `${origin}/v1`, logs: () => log, stop };
  } catch (err) {
    await stop();
    err.message += `\n--- agentengine ${args.join(' ')} output ---\n${log}`;
    throw err;
  }
}

function waitForListen(child, getLog, exited, deadline) {
  return new Promise((resolve, reject) => {
    const re = /agentengine serving .* on (http:\/\/[^\s]+)/;
    const timer = setTimeout(() => { cleanup(); reject(new Error(`server did not report its address within ${START_DEADLINE_MS} ms`)); }, deadline - Date.now());
    const onData = () => {
      const m = re.exec(getLog());
      if (m) { cleanup(); resolve(m[1].replace(/\/+$/, '')); }
    };
    const onExit = ({ code, signal }) => { cleanup(); reject(new Error(`server exited before serving (code ${code}, signal ${signal})`)); };
    function cleanup() {
      clearTimeout(timer);
      child.stderr.off('data', onData);
      child.stdout.off('data', onData);
    }
    child.stderr.on('data', onData);
    child.stdout.on('data', onData);
    exited.then(onExit);
    onData();
  });
}

async function waitForHealth(origin, exited, getLog, deadline) {
  let dead = null;
  exited.then((s) => { dead = s; });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (dead) throw new Error(`server exited while starting (code ${dead.code}, signal ${dead.signal})`);
    try {
      const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2000) });
      const body = await res.text();
      last = `${res.status} ${body}`;
      if (res.ok && JSON.parse(body).status === 'ok') return;
    } catch (e) {
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`GET /health was not {"status":"ok"} within ${START_DEADLINE_MS} ms (last: ${last})`);
}
