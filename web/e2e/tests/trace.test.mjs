// The trace view of a turn: after a tool turn, the turn's trace control opens a waterfall
// of the spans the server keeps (GetRunTrace): the HTTP request, invoke_agent, the runner
// call and the tool's execute_tool span, each with a duration. With --no-trace the
// control is absent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, launchBrowser, shot, startServer, stopServer, watch } from '../harness.mjs';

const T = { timeout: 60_000 };
let tmp; let bin; let browser;

async function openUI(srv) {
  const page = await browser.context.newPage();
  page.setDefaultTimeout(20_000);
  const problems = watch(page);
  await page.goto(srv.url + '/');
  await page.waitForSelector('body[data-ready="true"]');
  return { page, problems };
}

async function toolTurn(page) {
  await page.getByLabel('Message', { exact: true }).fill('use the tool on paris');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.waitForSelector('body:not(.is-running)');
  const msg = page.locator('.msg.assistant').last();
  await msg.getByText(/The lookup tool says/).waitFor();
  return msg;
}

const DURATION = /^\d+(\.\d+)?(µs|ms|s)$/;

describe('trace view', { timeout: 300_000 }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-web-trace-'));
    bin = binary(tmp);
    browser = await launchBrowser();
  }, { timeout: 300_000 });

  after(async () => {
    await browser?.close().catch(() => {});
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('a tool turn shows its waterfall', T, async () => {
    const srv = await startServer(bin);
    try {
      const { page, problems } = await openUI(srv);
      const msg = await toolTurn(page);
      const open = msg.getByRole('button', { name: 'Show trace' });
      await open.waitFor();
      assert.equal(await open.locator('svg[data-icon="trace"]').count(), 1, 'the control is the trace icon');
      await open.click();
      const dialog = page.getByRole('dialog', { name: 'Trace of this turn' });
      await dialog.waitFor();
      const rows = dialog.locator('.waterfall .span-row');
      await rows.first().waitFor();
      const names = await rows.evaluateAll((els) => els.map((e) => e.dataset.spanName));
      for (const want of ['POST /agentengine/api/v1/RunAgent', 'invoke_agent echo-go', 'runner.run echo-go', 'execute_tool lookup', 'store start_run']) {
        assert.ok(names.includes(want), `span ${want} in ${names.join(', ')}`);
      }
      // The tree: invoke_agent under the HTTP span, the tool under invoke_agent.
      const indent = async (name) => Number.parseFloat(await dialog.locator(`.span-row[data-span-name="${name}"] .span-label`).evaluate((e) => e.style.paddingLeft));
      assert.ok(await indent('invoke_agent echo-go') > await indent('POST /agentengine/api/v1/RunAgent'));
      assert.ok(await indent('execute_tool lookup') > await indent('invoke_agent echo-go'));
      for (const d of await dialog.locator('.span-dur').allInnerTexts()) assert.match(d, DURATION);
      const turn = dialog.locator('.span-row[data-span-name="invoke_agent echo-go"]');
      assert.match(await turn.locator('.span-label').innerText(), /completed/);
      assert.match(await turn.locator('.span-label').innerText(), /out \d+ tok/);
      assert.match(await turn.locator('.span-label').innerText(), /model \S+/);
      const tool = dialog.locator('.span-row[data-span-name="execute_tool lookup"]');
      assert.match(await tool.locator('.span-label').innerText(), /tool lookup/);
      // Each bar lies inside its track.
      const bar = await tool.locator('.span-bar').evaluate((e) => ({ l: e.offsetLeft, w: e.offsetWidth, t: e.parentElement.offsetWidth }));
      assert.ok(bar.w > 0 && bar.l >= 0 && bar.l + bar.w <= bar.t + 1, JSON.stringify(bar));
      await tool.locator('summary').click();
      await tool.locator('.span-attrs').getByText('gen_ai.tool.call.id').waitFor();
      assert.match(await dialog.locator('.trace-summary').innerText(), /spans · .* · trace [0-9a-f]{32}/);
      await shot(page, 'trace-waterfall');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.deepEqual(problems, [], 'no page errors or CSP violations');
      await page.close();
    } finally {
      await stopServer(srv);
    }
  });

  test('with content capture on, the tool span shows its arguments and result', T, async () => {
    process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = 'true';
    let srv;
    try {
      srv = await startServer(bin);
    } finally {
      delete process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT;
    }
    try {
      const { page, problems } = await openUI(srv);
      const msg = await toolTurn(page);
      await msg.getByRole('button', { name: 'Show trace' }).click();
      const tool = page.getByRole('dialog', { name: 'Trace of this turn' }).locator('.span-row[data-span-name="execute_tool lookup"]');
      await tool.locator('summary').click();
      const blocks = tool.locator('.span-content');
      await blocks.first().waitFor();
      assert.deepEqual(await tool.locator('.span-detail > .label').allInnerTexts(), ['Arguments', 'Result']);
      assert.match(await blocks.nth(0).innerText(), /paris/);
      assert.match(await blocks.nth(1).innerText(), /PARIS/);
      await shot(page, 'trace-tool-content');
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await stopServer(srv);
    }
  });

  test('with --no-trace no turn has the control', T, async () => {
    const srv = await startServer(bin, ['examples/echo-go'], ['--no-trace']);
    try {
      const { page, problems } = await openUI(srv);
      const msg = await toolTurn(page);
      await msg.getByRole('button', { name: 'Copy message' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Show trace' }).count(), 0);
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await stopServer(srv);
    }
  });
});
