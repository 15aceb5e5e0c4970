// Google ADK's own dev UI, served by `agentengine web` from the google-adk installed in
// the project's environment, on examples/adk-team (a coordinator agent that transfers to
// a scribe whose tool saves notes as ADK artifacts): chat, the two agents' graph, the
// artifact the scribe saved shown and downloaded; no request of the UI may answer 404
// (except files the installed google-adk references but does not ship) and the page may
// throw nothing.
//
// The interpreter: AGENTENGINE_ADK_PYTHON (e.g. a google-adk 1.x environment, as
// scripts/test.sh web makes it), else $PYTHON (the test virtualenv, google-adk 2.x).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, launchBrowser, shot, stopServer } from '../harness.mjs';
import { copyExample, installedADK, startWeb, watch } from '../adkdevui.mjs';

const T = { timeout: 120_000 };
const PY = process.env.AGENTENGINE_ADK_PYTHON || process.env.PYTHON;
let tmp; let srv; let browser; let page;
let label = '';
const problems = [];

function project() {
  if (!PY) throw new Error('set PYTHON or AGENTENGINE_ADK_PYTHON (an interpreter with google-adk)');
  return copyExample(tmp, 'adk-team', PY);
}

describe('ADK dev UI on a two-agent project with artifacts', () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-adkart-'));
    srv = await startWeb(binary(tmp), project());
    const adk = await installedADK(PY);
    label = `adk${adk.major}`;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
    watch(page, srv, adk.browserDir, problems);
  }, { timeout: 300_000 });

  after(async () => {
    if (browser) await browser.close();
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the scribe saves a note: the transfer, the artifact shown and downloaded', T, async () => {
    const port = new URL(srv.url).port;
    await page.goto(`http://127.0.0.1:${port}/dev-ui/?app=adk-team`);
    const input = page.getByPlaceholder('Type a message...');
    await input.waitFor();
    await input.fill('save note title=plan text="buy milk"');
    await input.press('Enter');
    await page.getByText('Saved plan.md (version 0).', { exact: false }).first().waitFor();
    await page.getByText('transfer_to_agent', { exact: false }).first().waitFor();
    // The two agents' graph the runner computed with the installed google-adk's helpers.
    await page.locator('svg .node').filter({ hasText: 'scribe' }).first().waitFor();
    await page.locator('svg .node').filter({ hasText: 'coordinator' }).first().waitFor();
    await shot(page, `adk-dev-ui-artifacts-chat-${label}`);

    // The UI fetched the version the event's artifactDelta names, and lists it.
    await page.getByText('Artifacts', { exact: true }).click();
    await page.getByText('plan.md', { exact: false }).first().waitFor({ state: 'visible' });
    await shot(page, `adk-dev-ui-artifacts-tab-${label}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('button').filter({ has: page.locator('mat-icon', { hasText: 'file_download' }) }).first().click(),
    ]);
    const file = join(tmp, 'note.md');
    await download.saveAs(file);
    assert.equal(readFileSync(file, 'utf8'), '# plan\n\nbuy milk\n');

    // The same version through the API, from agentengine's store.
    const sessions = await (await fetch(`${srv.url}/apps/adk-team/users/user/sessions`)).json();
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    const base = `${srv.url}/apps/adk-team/users/user/sessions/${sessions[0].id}`;
    assert.deepEqual(await (await fetch(`${base}/artifacts`)).json(), ['plan.md']);
    const s = await (await fetch(base)).json();
    assert.deepEqual([...new Set(s.events.map((e) => e.author))].sort(), ['coordinator', 'scribe', 'user']);
    assert.ok(s.events.some((e) => e.actions.artifactDelta['plan.md'] === 0), 'an event with the artifact delta');
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });

  test('a second version of the note is shown', T, async () => {
    const input = page.getByPlaceholder('Type a message...');
    await input.fill('save note title=plan text="buy oat milk"');
    await input.press('Enter');
    await page.getByText('Saved plan.md (version 1).', { exact: false }).first().waitFor();
    const sessions = await (await fetch(`${srv.url}/apps/adk-team/users/user/sessions`)).json();
    const base = `${srv.url}/apps/adk-team/users/user/sessions/${sessions[0].id}`;
    assert.deepEqual(await (await fetch(`${base}/artifacts/plan.md/versions`)).json(), [0, 1]);
    await shot(page, `adk-dev-ui-artifacts-v1-${label}`);
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });

  // ADK's web UI sends an attached file as inline data of the message (ADK's server hands
  // the message to the agent as is): the offline model names the files it got.
  test('a file attached in the UI reaches the agent', T, async () => {
    // The UI's own file input, behind its attach button (a menu item in 2.x).
    await page.locator('input[type=file]').first().setInputFiles({ name: 'list.txt', mimeType: 'text/plain', buffer: Buffer.from('hello world') });
    await page.getByText('list.txt', { exact: false }).first().waitFor(); // the UI shows the attachment
    const input = page.getByPlaceholder('Type a message...');
    await input.fill('here is my list');
    await input.press('Enter');
    await page.getByText('Files: list.txt (11 bytes)', { exact: false }).first().waitFor();
    await shot(page, `adk-dev-ui-artifacts-upload-${label}`);
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });
});
