// The UI's icons are SVG, not emoji or symbol glyphs: in a browser whose only fonts are
// DejaVu (no emoji font), every control still shows its icon and no text of the UI
// needs a glyph the fonts lack. Also: an approved call reads in event order after a
// reload (the call and its approval, then the resumed turn's result and answer).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, launchBrowser, shot, startServer, stopServer, watch } from '../harness.mjs';

const T = { timeout: 60_000 };
const DEJAVU = '/usr/share/fonts/truetype/dejavu';
let tmp; let srv; let browser; let page; let problems;

async function send(text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

async function idle() {
  await page.waitForSelector('body:not(.is-running)');
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
}

/** pictographs lists the emoji and pictographic characters of the page's text. */
function pictographs() {
  return page.evaluate(() => {
    const found = new Set();
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const ch of n.textContent.match(/[\p{Extended_Pictographic}\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\ufe0f]/gu) || []) found.add(ch);
    }
    return [...found];
  });
}

describe('icons without emoji fonts', { timeout: 300_000 }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-web-icons-'));
    srv = await startServer(binary(tmp));
    browser = await launchBrowser({ fonts: [DEJAVU] });
    page = await browser.context.newPage();
    page.setDefaultTimeout(20_000);
    problems = watch(page);
  }, { timeout: 300_000 });

  after(async () => {
    await page?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the Chromium under test has no emoji font', T, async () => {
    await page.goto(srv.url + '/');
    await page.waitForSelector('body[data-ready="true"]');
    // An emoji has the width of the missing-glyph box, whichever emoji it is.
    const widths = await page.evaluate(() => {
      const c = document.createElement('canvas').getContext('2d');
      c.font = '20px sans-serif';
      return ['\u{1F5D1}', '\u{1F44D}', '\u{1F916}'].map((s) => c.measureText(s).width);
    });
    assert.ok(widths.every((w) => w === widths[0]), `emoji widths ${widths}: an emoji font is installed`);
  });

  test('every control shows an SVG icon, the page has no pictographs', T, async () => {
    await send('use the tool on paris');
    await page.locator('.msg.assistant').last().getByText(/The lookup tool says/).waitFor();
    await idle();
    await send('please approve deleting notes.txt');
    const card = page.getByRole('group', { name: /Approval request: delete_file/ });
    await card.waitFor();
    await idle();
    const named = ['Chat list', 'Workspace', 'Events', 'Attach a file'];
    for (const label of named) {
      const el = page.getByLabel(label, { exact: true }).first();
      assert.equal(await el.locator('svg.svg-icon').count() + await page.locator(`[title="${label}"] svg.svg-icon`).count() > 0, true, `${label} has no SVG icon`);
    }
    for (const sel of ['#theme', '.picker', '.sessions li button[aria-label^="Rename chat"]', '.sessions li button[aria-label^="Delete chat"]',
      'button[aria-label="Good response"]', 'button[aria-label="Bad response"]', '.tool-icon', '.approval-title']) {
      await page.locator(`${sel} svg.svg-icon`).first().waitFor({ state: 'attached' });
    }
    assert.deepEqual(await pictographs(), [], 'no emoji or symbol glyphs in the UI');
    await shot(page, 'icons-no-emoji-font-approval');
    await page.getByRole('button', { name: 'Workspace' }).click();
    await page.getByRole('complementary', { name: 'Workspace' }).waitFor();
    await shot(page, 'icons-no-emoji-font-workspace');
    await page.getByRole('button', { name: 'Workspace' }).click();
    assert.deepEqual(problems, []);
  });

  test('an approved call reads in event order after a reload', T, async () => {
    await page.getByRole('group', { name: /Approval request: delete_file/ }).getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: deleted notes.txt.').waitFor();
    await idle();
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.getByText('Approved: deleted notes.txt.').waitFor();
    // Document order of the turn's parts: call, approval, result, answer.
    const order = await page.evaluate(() => {
      const turns = [...document.querySelectorAll('.msg.assistant')].slice(-2);
      const parts = turns.flatMap((t) => [...t.querySelectorAll('details.tool, .approval, .md.text')]);
      return parts.map((el) => {
        if (el.matches('.approval')) return 'approval';
        if (el.matches('details.tool')) return el.querySelector('.result:not([hidden])') ? 'tool+result' : 'tool';
        return el.textContent.includes('Approved: deleted') ? 'answer' : 'text';
      });
    });
    assert.deepEqual(order, ['text', 'tool', 'approval', 'tool+result', 'answer']);
    assert.deepEqual(await pictographs(), []);
    await shot(page, 'icons-no-emoji-font-approval-reloaded');
    assert.deepEqual(problems, []);
  });
});
