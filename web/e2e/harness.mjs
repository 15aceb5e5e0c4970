// Test harness: a real `agentengine run examples/echo-go` and Debian's Chromium driven by
// playwright-core (never a downloaded browser).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(here, '../..');
export const SHOTS = join(here, 'screenshots');
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';

/** binary returns AGENTENGINE_BIN or builds cmd/agentengine into a temp dir. */
export function binary(tmp) {
  if (process.env.AGENTENGINE_BIN) return process.env.AGENTENGINE_BIN;
  const out = join(tmp, 'agentengine');
  execFileSync('go', ['build', '-o', out, './cmd/agentengine'], { cwd: ROOT, stdio: 'inherit' });
  return out;
}

/** startServer runs agentengine on a free port (serving examples/echo-go, or the projects
 * given) and resolves with {url, proc, stderr()}. */
export function startServer(bin, projects = ['examples/echo-go'], extra = []) {
  const proc = spawn(bin, ['run', ...projects, '--port', '0', '--session-backend', 'memory', ...extra],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => { proc.kill(); reject(new Error(`agentengine did not start in time:\n${log}`)); }, 180_000);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /serving .* on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolvePromise({ url: m[1], proc, stderr: () => log }); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`agentengine exited (${code}):\n${log}`)); });
  });
}

export async function stopServer(srv) {
  if (!srv || srv.proc.exitCode !== null) return;
  srv.proc.removeAllListeners('exit');
  const done = new Promise((r) => srv.proc.once('exit', r));
  srv.proc.kill('SIGINT');
  const t = setTimeout(() => srv.proc.kill('SIGKILL'), 15_000);
  await done;
  clearTimeout(t);
}

/**
 * launchBrowser starts Chromium with a fresh profile; returns {context, close()}. With
 * fonts, Chromium sees only the font files under those directories (a fontconfig of its
 * own): a machine without emoji fonts, say.
 */
export async function launchBrowser({ fonts } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const profile = mkdtempSync(join(tmpdir(), 'agentengine-chromium-'));
  let env;
  if (fonts) {
    const conf = join(profile, 'fonts.conf');
    const dirs = fonts.map((d) => `<dir>${d}</dir>`).join('');
    // The system's rules (family aliases) apply; its font directories do not.
    writeFileSync(conf, `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>${dirs}<include ignore_missing="yes">/etc/fonts/conf.d</include><cachedir>${join(profile, 'fc-cache')}</cachedir></fontconfig>\n`);
    env = { ...process.env, FONTCONFIG_FILE: conf };
  }
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    env,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    viewport: { width: 1280, height: 860 },
  });
  return { context, close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); } };
}

/** watch collects page errors and CSP violations so tests can assert there were none. */
export function watch(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  return problems;
}

let shotN = 0;
export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  shotN++;
  await page.screenshot({ path: join(SHOTS, `${String(shotN).padStart(2, '0')}-${name}.png`), fullPage: false });
}

/** api posts a Web UI action from the test (to check what the UI stored). */
export async function api(base, action, body) {
  const res = await fetch(`${base}/agentengine/api/v1/${action}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const env = await res.json();
  if (env.Code !== 0) throw new Error(`${action}: ${env.Message}`);
  return env.Data;
}

/** minimalPdf builds a valid one-page PDF showing text (correct xref offsets). */
export function minimalPdf(text) {
  const esc = text.replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 24 Tf 72 720 Td (${esc}) Tj ET`;
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets = [];
  objs.forEach((o, i) => { offsets.push(Buffer.byteLength(out)); out += `${i + 1} 0 obj\n${o}\nendobj\n`; });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/**
 * ksadkWebDir finds ksadk-web, KsADK's React UI as the ksadk wheel ships it built
 * (ksadk/server/static): KSADK_WEB_DIR, else what scripts/ksadk-web.sh cached. Returns ''
 * when there is none.
 */
export function ksadkWebDir() {
  if (process.env.KSADK_WEB_DIR) return resolve(process.env.KSADK_WEB_DIR);
  try {
    return execFileSync('bash', [join(ROOT, 'scripts', 'ksadk-web.sh'), '--offline'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch { return ''; }
}

const KSADK_UI_PATHS = new Set(['/', '/chat', '/build', '/deploy']);
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
  '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf',
  '.png': 'image/png', '.json': 'application/json', '.wasm': 'application/wasm' };

/**
 * serveKsadkWeb serves ksadk-web's files from dir on one origin with agentengine (at
 * upstream), as KsADK's own server does: its UI routes answer index.html, a file of the
 * bundle answers itself, anything else (/agentengine/api/v1/..., /v1/...) goes to
 * agentengine unchanged, streams included. Resolves with {url, close()}.
 */
export async function serveKsadkWeb(dir, upstream) {
  const { createServer, request } = await import('node:http');
  const { readFile, stat } = await import('node:fs/promises');
  const { extname, normalize, sep } = await import('node:path');
  const up = new URL(upstream);
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (req.method === 'GET') {
      const file = KSADK_UI_PATHS.has(path) ? join(root, 'index.html') : normalize(join(root, path));
      if (file.startsWith(root + sep)) {
        try {
          if ((await stat(file)).isFile()) {
            res.writeHead(200, { 'Content-Type': MIME[extname(file)] || 'application/octet-stream' });
            res.end(await readFile(file));
            return;
          }
        } catch { /* not a file of the bundle: agentengine's */ }
      }
    }
    const out = request({ host: up.hostname, port: up.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: up.host } }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    out.on('error', (e) => { if (!res.headersSent) res.writeHead(502); res.end(String(e)); });
    req.pipe(out);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
