// What the tests of Google ADK's own dev UI (served by `agentengine web`) share: a copy of
// an example project on a given interpreter, the server, the installed google-adk's dev UI
// files, and the page's problems (uncaught errors, CSP violations, failed requests).
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './harness.mjs';

/** copyExample copies examples/NAME into DIR/NAME, set to run with PYTHON. */
export function copyExample(dir, name, python) {
  const out = join(dir, name);
  cpSync(join(ROOT, 'examples', name), out, {
    recursive: true,
    filter: (src) => !/(^|\/)(\.venv|\.agentengine|__pycache__)(\/|$)/.test(src.slice(ROOT.length)),
  });
  appendFileSync(join(out, 'agentengine.yaml'), `\npython: ${python}\n`);
  return out;
}

/**
 * startWeb runs `agentengine web DIR` and resolves with its API URL, the dev UI's URL, the
 * process and its log. No model keys reach it: the examples' offline models answer, and
 * ADK's LLM-judged eval metrics have no judge.
 */
export function startWeb(bin, dir) {
  const env = { ...process.env, KSADK_SESSION_BACKEND: 'memory' };
  for (const k of ['OPENAI_API_KEY', 'GOOGLE_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI']) delete env[k];
  const proc = spawn(bin, ['web', dir, '-p', '0', '--no-open'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => { proc.kill(); reject(new Error(`agentengine web did not start in time:\n${log}`)); }, 180_000);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      const api = /serving .* on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      const ui = /ADK dev UI: (.*)/.exec(log);
      if (api && ui) { clearTimeout(timer); resolvePromise({ url: api[1], devUI: ui[1].trim(), proc, stderr: () => log }); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`agentengine web exited (${code}):\n${log}`)); });
  });
}

/** installedADK resolves with the dev UI files' directory and the version of PYTHON's google-adk. */
export async function installedADK(python) {
  const out = await new Promise((r) => {
    const p = spawn(python, ['-c', 'import google.adk, os; print(os.path.join(os.path.dirname(google.adk.__file__), "cli", "browser")); print(google.adk.__version__)']);
    let s = ''; p.stdout.on('data', (c) => { s += c; }); p.on('exit', () => r(s.trim()));
  });
  const [browserDir, version] = out.split('\n');
  return { browserDir, version, major: Number(version.split('.')[0]) };
}

/**
 * watch records the page's problems in PROBLEMS: uncaught errors, CSP violations (but the
 * web fonts of other origins ADK's page names, refused on purpose) and the server's answers
 * of 400 or more, except a 404 for a file the installed google-adk references but does not
 * ship (its own gap).
 */
export function watch(page, srv, browserDir, problems) {
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text()) && !/font/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.origin !== srv.url) return; // the font service of ADK's index.html is blocked by the CSP
    if (r.status() === 404 && u.pathname.startsWith('/dev-ui/') && !existsSync(join(browserDir, u.pathname.replace(/^\/dev-ui\//, '')))) return;
    if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${u.pathname}${u.search}`);
  });
}
