// The Evals tab of Google ADK's own dev UI, served by `agentengine web` on
// examples/adk-assistant: an eval set created, the chat's session added to it as a case,
// the set run with the UI's default metrics by ADK's evaluator in the agent's runner, the
// result and the run's conversation shown — with no 404 and no uncaught page error.
//
// The project: AGENTENGINE_ADK_PROJECT (a project whose environment has google-adk with
// its eval extras), else a copy of examples/adk-assistant run with $PYTHON (the test
// virtualenv, which has them).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { binary, launchBrowser, shot, stopServer } from '../harness.mjs';
import { copyExample, installedADK, startWeb, watch } from '../adkdevui.mjs';

// ADK's evaluator imports a large stack in the runner on first use; the machine is shared.
const T = { timeout: 300_000 };
const SLOW = { timeout: 180_000 };
let tmp; let srv; let browser; let page;
const problems = [];
let adkMajor = 0;

function project() {
  if (process.env.AGENTENGINE_ADK_PROJECT) return resolve(process.env.AGENTENGINE_ADK_PROJECT);
  if (!process.env.PYTHON) throw new Error('set PYTHON (an interpreter with google-adk[eval]) or AGENTENGINE_ADK_PROJECT');
  return copyExample(tmp, 'adk-assistant', process.env.PYTHON);
}

describe('ADK dev UI evals served by agentengine web', () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-adkevals-'));
    const dir = project();
    srv = await startWeb(binary(tmp), dir);
    const py = process.env.AGENTENGINE_ADK_PROJECT ? join(dir, '.venv', 'bin', 'python') : process.env.PYTHON;
    const adk = await installedADK(py);
    adkMajor = adk.major;
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

  test('an eval set made from the chat runs and shows its result', T, async () => {
    const port = new URL(srv.url).port;
    await page.goto(`http://127.0.0.1:${port}/dev-ui/?app=adk-assistant`);
    const input = page.getByPlaceholder('Type a message...');
    await input.waitFor();

    // The chat, with a tool call.
    await input.fill('weather city=Paris');
    await input.press('Enter');
    await page.getByText('Tool results:', { exact: false }).first().waitFor();

    // A new eval set, named in the UI's dialog, then the chat's session added to it as
    // the case "paris".
    await page.getByText('Evals', { exact: true }).click();
    await page.getByText('Create Evaluation Set', { exact: true }).click();
    const dialog = page.locator('mat-dialog-container');
    await dialog.getByLabel('Eval Set Name').fill('weather_set');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.locator('app-eval-tab').getByText('weather_set', { exact: true }).click();
    await page.getByText('From Current Session', { exact: true }).click();
    await dialog.locator('input').fill('paris');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.locator('app-eval-tab').getByText('paris', { exact: true }).waitFor();
    await shot(page, 'adk-dev-ui-eval-case');

    // Run with the dialog's defaults (tool trajectory and response match): the metrics
    // come from ADK's registry in the runner, the evaluation runs the agent there again.
    await page.getByText('Run All', { exact: true }).click();
    await dialog.getByText('Tool Trajectory', { exact: true }).waitFor(SLOW);
    await shot(page, 'adk-dev-ui-eval-metrics');
    // google-adk 2.x's UI then opens the run's conversation: the session ADK's inference
    // ran in, which agentengine keeps as adk web does (1.x's UI shows the summary only).
    const opened = adkMajor >= 2
      ? page.waitForResponse((r) => /\/sessions\/adk-eval-session-/.test(new URL(r.url()).pathname) && r.status() === 200, SLOW)
      : null;
    await dialog.getByRole('button', { name: /(Run|^Start)$/ }).click(); // Start in google-adk 1.x
    await page.locator('app-eval-tab').getByText('1 PASS', { exact: true }).waitFor(SLOW);
    await page.locator('app-eval-tab').getByText('paris', { exact: true }).waitFor();
    if (opened) {
      await opened;
      await page.getByText('EVAL RESULT:', { exact: false }).waitFor();
      await page.getByText('Tool results:', { exact: false }).first().waitFor({ state: 'visible' });
      await page.getByText('PASS', { exact: true }).first().waitFor();
    }
    await shot(page, 'adk-dev-ui-eval-result');

    // What the UI stored is in agentengine's store, in ADK's shapes.
    const ids = await (await fetch(`${srv.url}/dev/apps/adk-assistant/eval-results`)).json();
    assert.equal(ids.evalResultIds.length, 1, JSON.stringify(ids));
    const result = await (await fetch(`${srv.url}/dev/apps/adk-assistant/eval_results/${encodeURIComponent(ids.evalResultIds[0])}`)).json();
    assert.equal(result.evalSetId, 'weather_set');
    assert.deepEqual(result.evalCaseResults.map((c) => [c.evalId, c.finalEvalStatus]), [['paris', 1]]);
    const evalCase = await (await fetch(`${srv.url}/dev/apps/adk-assistant/eval_sets/weather_set/evals/paris`)).json();
    assert.equal(evalCase.conversation[0].userContent.parts[0].text, 'weather city=Paris');
    assert.deepEqual(problems, [], 'no 404 and no uncaught page error');
  });
});
