// Google ADK's own dev UI, served by `agentengine web` from the google-adk installed in
// the project's environment, chatting with examples/adk-assistant: no request of the UI
// may answer 404 (except files the installed google-adk references but does not ship) and
// the page may throw nothing.
//
// The project: AGENTENGINE_ADK_PROJECT (a project whose environment `agentengine setup`
// made, e.g. examples/adk-assistant), else a copy of examples/adk-assistant run with
// $PYTHON (the test virtualenv, which has google-adk).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { binary, launchBrowser, shot, stopServer } from '../harness.mjs';
import { copyExample, installedADK, startWeb, watch } from '../adkdevui.mjs';

const T = { timeout: 120_000 };
let tmp; let srv; let browser; let page;
const problems = [];
const traceCalls = []; // the trace routes' answers: {path, status, body}

function project() {
  if (process.env.AGENTENGINE_ADK_PROJECT) return resolve(process.env.AGENTENGINE_ADK_PROJECT);
  if (!process.env.PYTHON) throw new Error('set PYTHON (an interpreter with google-adk) or AGENTENGINE_ADK_PROJECT');
  return copyExample(tmp, 'adk-assistant', process.env.PYTHON);
}

let adkMajor = 0;

describe('ADK dev UI served by agentengine web', () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-adkui-'));
    const dir = project();
    srv = await startWeb(binary(tmp), dir);
    const py = process.env.AGENTENGINE_ADK_PROJECT ? join(dir, '.venv', 'bin', 'python') : process.env.PYTHON;
    const adk = await installedADK(py);
    adkMajor = adk.major;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
    watch(page, srv, adk.browserDir, problems);
    // The trace routes' answers, for the Trace tab's test.
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (u.origin === srv.url && /\/debug\/trace\//.test(u.pathname)) {
        traceCalls.push(r.text().then((body) => ({ path: u.pathname, status: r.status(), body }), () => ({ path: u.pathname, status: r.status(), body: '' })));
      }
    });
  }, { timeout: 300_000 });

  after(async () => {
    if (browser) await browser.close();
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('web says where each UI is', () => {
    assert.match(srv.stderr(), /Web UI: http:\/\/localhost:\d+\//);
    assert.match(srv.devUI, /^http:\/\/localhost:\d+\/dev-ui\/$/);
  });

  test('the dev UI loads from the installed google-adk and chats with a tool call', T, async () => {
    const port = new URL(srv.url).port;
    await page.goto(`http://127.0.0.1:${port}/dev-ui?app=adk-assistant`); // ADK's redirect adds the slash
    assert.match(page.url(), /\/dev-ui\/\?app=adk-assistant$/);
    const input = page.getByPlaceholder('Type a message...');
    await input.waitFor();
    await shot(page, 'adk-dev-ui-loaded');
    await input.fill('weather city=Paris');
    await input.press('Enter');
    // The model's answer after the tool ran, and the tool call and result shown as chips.
    await page.getByText('Tool results:', { exact: false }).first().waitFor();
    await page.getByText('get_weather', { exact: false }).first().waitFor();
    // The agent graph the runner computed, drawn by the UI (Graphviz in WebAssembly);
    // google-adk before 2.0 has no graph helpers for the runner to compute it with.
    if (adkMajor >= 2) await page.locator('svg .node').first().waitFor();
    await shot(page, 'adk-dev-ui-chat');
    // The session is ours: the ADK web API lists it with the agent's own events.
    const sessions = await (await fetch(`${srv.url}/apps/adk-assistant/users/user/sessions`)).json();
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    const s = await (await fetch(`${srv.url}/apps/adk-assistant/users/user/sessions/${sessions[0].id}`)).json();
    const authors = new Set(s.events.map((e) => e.author));
    assert.deepEqual([...authors].sort(), ['assistant', 'user']);
    assert.ok(s.events.some((e) => e.turnComplete && e.usageMetadata), 'the final event has turnComplete and usage');
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });

  // The UI reads the session's spans when a turn's stream ends and files each trace under
  // the invocation its spans name: the turn's span, the runner call, the store writes and
  // the tool call, drawn as a waterfall under the run's invocation id.
  test('the Trace tab shows the turn\'s spans', T, async () => {
    await page.getByText('Traces', { exact: true }).click();
    try {
      await traceTab();
    } finally {
      await page.getByText('Events', { exact: true }).click(); // the next test reads the events
    }
  });

  async function traceTab() {
    const calls = await Promise.all(traceCalls);
    assert.ok(calls.length > 0, 'the UI read the session trace');
    for (const c of calls) assert.equal(c.status, 200, `${c.path}: ${c.body}`);
    const spans = JSON.parse(calls.filter((c) => c.path.includes('/debug/trace/session/')).at(-1).body);
    const names = spans.map((s) => s.name);
    for (const want of ['invoke_agent adk-assistant', 'runner.run adk-assistant', 'execute_tool get_weather', 'store start_run']) {
      assert.ok(names.includes(want), `span ${want} in ${names.join(', ')}`);
    }
    const turn = spans.find((s) => s.name === 'invoke_agent adk-assistant');
    const events = (await (await fetch(`${srv.url}/apps/adk-assistant/users/user/sessions/${turn.attributes['gen_ai.conversation.id']}`)).json()).events;
    assert.equal(turn.attributes['gcp.vertex.agent.invocation_id'], events.at(-1).invocationId);
    // The waterfall of the invocation: ADK labels the turn by its agent and a tool call by its tool.
    await page.locator('.invocation-id').getByText(events.at(-1).invocationId, { exact: true }).waitFor();
    for (const label of ['runner.run adk-assistant', 'store start_run', 'store finish_run', 'get_weather']) {
      await page.getByText(label, { exact: true }).filter({ visible: true }).first().waitFor();
    }
    await page.getByText(/Total latency: [0-9.]+(ms|s)\b/).waitFor();
    await shot(page, 'adk-dev-ui-trace');
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  }

  test('a session exported by the dev UI imports back with the same events', T, async () => {
    const sessionMenu = page.locator('button[mattooltip="Select a session"]');
    await sessionMenu.click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Export', { exact: true }).click()]);
    const file = join(tmp, 'session.json');
    await download.saveAs(file);
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    assert.ok(exported.events.length >= 4, JSON.stringify(exported).slice(0, 300));
    await page.keyboard.press('Escape');
    await sessionMenu.click();
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByText('Import', { exact: true }).click()]);
    const imported = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/apps/adk-assistant/users/user/sessions');
    await chooser.setFiles(file);
    const created = await (await imported).json();
    assert.notEqual(created.id, exported.id);
    assert.equal(created.events.length, exported.events.length);
    await page.getByText('Session imported successfully', { exact: false }).waitFor();
    // The UI opens the imported session: its events are shown again.
    await page.getByText('Tool results:', { exact: false }).first().waitFor({ state: 'visible' });
    await page.getByText('Turn Complete', { exact: false }).first().waitFor({ state: 'visible' });
    await shot(page, 'adk-dev-ui-imported');
    // Field by field but ids and times (the UI stamps imported events with the import's time).
    const strip = (evs) => evs.map(({ id, timestamp, ...rest }) => rest);
    const again = await (await fetch(`${srv.url}/apps/adk-assistant/users/user/sessions/${created.id}`)).json();
    assert.deepEqual(strip(again.events), strip(exported.events));
    assert.deepEqual(again.state, exported.state);
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });
});
