// Browser tests of the bundled Web UI against a real `agentengine run examples/echo-go`.
// Each step writes a screenshot to web/e2e/screenshots/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, binary, launchBrowser, minimalPdf, shot, startServer, stopServer, watch } from '../harness.mjs';

const T = { timeout: 60_000 };
let tmp; let srv; let browser; let page; let problems;

async function fresh(path = '/') {
  if (page) await page.close();
  page = await browser.context.newPage();
  page.setDefaultTimeout(20_000);
  problems = watch(page);
  await page.goto(srv.url + path);
  await page.waitForSelector('body[data-ready="true"]');
}

async function send(text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

/** idle waits until no run is in progress (the Send button is back). */
async function idle() {
  await page.waitForSelector('body:not(.is-running)');
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
}

function lastAssistant() {
  return page.locator('.msg.assistant').last();
}

function noProblems() {
  assert.deepEqual(problems, [], 'no page errors or CSP violations');
}

describe('web UI', { timeout: 600_000 }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-web-e2e-'));
    srv = await startServer(binary(tmp));
    browser = await launchBrowser();
  }, { timeout: 300_000 });

  after(async () => {
    await page?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('serves the UI with a strict CSP', T, async () => {
    const res = await fetch(srv.url + '/');
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy');
    for (const d of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'"]) assert.ok(csp.includes(d), csp);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    await fresh();
    assert.equal(await page.getByLabel('Agent').inputValue(), 'echo-go');
    await shot(page, 'empty');
    noProblems();
  });

  test('sends a message and streams reasoning and Markdown text', T, async () => {
    await send('hello');
    const msg = lastAssistant();
    await msg.locator('.text').filter({ hasText: 'Echo: hello' }).waitFor();
    await idle();
    await msg.locator('details.reasoning').filter({ hasText: 'Thinking about: hello' }).waitFor();
    assert.match(await page.locator('.msg.user').last().innerText(), /hello/);
    assert.match(page.url(), /#session=sess_/);
    await page.locator('.sessions li').filter({ hasText: 'hello' }).first().waitFor();
    await shot(page, 'streamed-reply');
    noProblems();
  });

  test('feedback thumbs up with a comment is stored', T, async () => {
    const msg = lastAssistant();
    await msg.getByRole('button', { name: 'Good response' }).click();
    await msg.getByText('Thanks for the feedback').waitFor();
    assert.equal(await msg.getByRole('button', { name: 'Good response' }).getAttribute('aria-pressed'), 'true');
    await msg.getByLabel('Feedback comment').fill('clear and short');
    await msg.getByRole('button', { name: 'Send comment' }).click();
    await msg.getByText('Comment saved').waitFor();
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    const { Events } = await api(srv.url, 'ListSessionEvents', { SessionId: sessionId, Limit: 200 });
    const fb = Events.filter((e) => e.EventType === 'feedback');
    assert.ok(fb.length >= 2, JSON.stringify(Events.map((e) => e.EventType)));
    assert.match(JSON.stringify(fb.at(-1)), /clear and short/);
    await shot(page, 'feedback');
    noProblems();
  });

  test('shows a tool-call card with arguments and result', T, async () => {
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('use the tool on paris');
    const card = lastAssistant().locator('details.tool[data-tool-name="lookup"]');
    await card.waitFor();
    assert.match(await card.innerText(), /paris/);
    await idle();
    await lastAssistant().locator('details.tool .result').filter({ hasText: 'PARIS' }).waitFor();
    await lastAssistant().getByText(/The lookup tool says/).waitFor();
    await shot(page, 'tool-card');
    noProblems();
  });

  test('approval: Approve resumes the run to completion', T, async () => {
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('please approve deleting notes.txt');
    const card = page.getByRole('group', { name: /Approval request: delete_file/ });
    await card.waitFor();
    await idle();
    await shot(page, 'approval-request');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: deleted notes.txt.').waitFor();
    await idle();
    await shot(page, 'approval-approved');
    noProblems();
  });

  test('refresh mid-run reattaches and keeps rendering live output', T, async () => {
    await fresh('/?slow=1');
    await page.getByText('slow mode').waitFor();
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('hello slowly');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo:' }).waitFor();
    await shot(page, 'refresh-before');
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    const live = page.locator('.msg.assistant[data-reattached="true"]');
    await live.locator('.text').filter({ hasText: 'Echo:' }).waitFor();
    const first = (await live.locator('.text').innerText()).length;
    await page.waitForFunction((n) => {
      const el = document.querySelector('.msg.assistant[data-reattached="true"] .text');
      return el && el.textContent.length > n;
    }, first);
    await shot(page, 'refresh-reattached');
    await idle();
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    const { Messages } = await api(srv.url, 'ListSessionMessages', { SessionId: sessionId });
    const stored = Messages.filter((m) => m.Role === 'assistant').at(-1);
    assert.equal(stored.RunStatus, 'completed');
    const shown = await lastAssistant().locator('.text').last().innerText();
    assert.equal(shown.replace(/\s+/g, ' ').trim(), stored.Content.text.replace(/\s+/g, ' ').trim());
    assert.ok(shown.length > first, 'output continued after the reload');
    await shot(page, 'refresh-completed');
    noProblems();
  });

  test('uploads a PDF and sends it with a message', T, async () => {
    await fresh('/');
    await page.getByRole('button', { name: /New chat/ }).click();
    const pdf = join(tmp, 'report.pdf');
    writeFileSync(pdf, minimalPdf('quarterly revenue'));
    await page.locator('#file').setInputFiles(pdf);
    await page.getByRole('list', { name: 'Files to send' }).getByText('report.pdf').waitFor();
    await shot(page, 'upload-pending');
    await send('hello, what does the report say?');
    await page.locator('.msg.user').last().getByText('report.pdf').waitFor();
    // The agent's answer quotes the text extracted from the PDF: it was read, not just sent.
    await lastAssistant().locator('.text').filter({ hasText: 'quarterly revenue' }).waitFor();
    await idle();
    const link = page.locator('.msg.user').last().getByRole('link', { name: /report\.pdf/ });
    assert.match(await link.getAttribute('href'), /AttachmentContent\?FileUri=ksadk-upload/);
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    const { Events } = await api(srv.url, 'ListSessionEvents', { SessionId: sessionId, Limit: 200 });
    const ref = Events.find((e) => e.EventType === 'attachment_ref');
    assert.ok(ref, 'an attachment_ref event is stored');
    assert.match(ref.Content.text_excerpt || '', /quarterly revenue/);
    const run = Events.filter((e) => e.EventType === 'run_status').at(-1);
    assert.equal(run.Content.status, 'completed');
    await shot(page, 'upload-sent');
    noProblems();
  });

  test('event inspector and dark theme', T, async () => {
    await page.getByRole('button', { name: 'Events' }).click();
    const panel = page.getByRole('complementary', { name: 'Event inspector' });
    await panel.getByText('attachment_ref').first().waitFor();
    await panel.getByText('run_status').first().waitFor();
    const before = await page.evaluate(() => document.documentElement.dataset.theme || '');
    await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
    const afterTheme = await page.evaluate(() => document.documentElement.dataset.theme);
    assert.notEqual(afterTheme, before);
    await page.evaluate(() => { document.documentElement.dataset.theme = 'dark'; });
    await shot(page, 'inspector-dark');
    await page.getByRole('button', { name: 'Events' }).click();
    noProblems();
  });

  test('renames and deletes a session', T, async () => {
    const item = page.locator('.sessions li.active');
    await item.waitFor();
    await item.getByRole('button', { name: /Rename chat/ }).click();
    await page.getByLabel('New chat title').fill('Quarterly report chat');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('.sessions li').filter({ hasText: 'Quarterly report chat' }).waitFor();
    await page.getByRole('heading', { name: 'Quarterly report chat' }).waitFor();
    await shot(page, 'renamed');
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    assert.equal((await api(srv.url, 'GetSession', { SessionId: sessionId })).Session.Title, 'Quarterly report chat');

    await page.getByLabel('Search chats').fill('quarterly');
    assert.equal(await page.locator('.sessions li[data-session-id]').count(), 1);
    await page.getByLabel('Search chats').fill('');

    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Delete chat Quarterly report chat' }).click();
    await page.locator('.sessions li').filter({ hasText: 'Quarterly report chat' }).waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    const { Sessions } = await api(srv.url, 'ListSessions', { AgentId: 'echo-go' });
    assert.ok(!Sessions.some((s) => s.SessionId === sessionId));
    await shot(page, 'deleted');
    noProblems();
  });

  test('shows the envelope Message of a failed action', T, async () => {
    await page.goto(srv.url + '/#session=sess_doesnotexist');
    await page.waitForSelector('body[data-ready="true"]');
    // An unknown session in the URL is ignored; a failing action shows its Message.
    await page.evaluate(async () => {
      const { call } = await import('/static/js/api.js');
      try { await call('GetSession', { SessionId: 'sess_missing' }); } catch (e) { window.__msg = e.message; }
    });
    const msg = await page.evaluate(() => window.__msg);
    assert.ok(msg && !/HTTP/.test(msg), msg);
    noProblems();
  });
  test('workspace panel: upload, list, preview, download zip, delete', T, async () => {
    await fresh('/');
    await page.getByRole('button', { name: 'Workspace' }).click();
    const panel = page.getByRole('complementary', { name: 'Workspace' });
    await panel.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Workspace' }).getAttribute('aria-expanded'), 'true');
    const txt = join(tmp, 'ws-note.txt');
    writeFileSync(txt, 'workspace note <b>not bold</b>\nsecond line\n');
    await page.locator('#ws-file').setInputFiles(txt);
    const open = panel.getByRole('button', { name: 'Preview ws-note.txt' });
    await open.waitFor();
    await panel.getByText('Uploaded ws-note.txt').waitFor();
    const { Entries } = await api(srv.url, 'ListWorkspaceFiles', { AgentId: 'echo-go', Path: '.', Recursive: true });
    assert.ok(Entries.some((e) => e.Path === 'ws-note.txt'), JSON.stringify(Entries));

    await open.click();
    const preview = panel.getByRole('region', { name: 'File preview' });
    await preview.locator('pre.ws-text').filter({ hasText: 'workspace note <b>not bold</b>' }).waitFor();
    assert.equal(await preview.locator('pre.ws-text b').count(), 0, 'text is escaped, never parsed as HTML');
    await shot(page, 'workspace-preview-text');

    // HTML previews render only in a sandboxed iframe (scripts allowed, opaque origin).
    const html = join(tmp, 'ws-page.html');
    writeFileSync(html, '<!doctype html><title>x</title><h1 id="t">static</h1><script>document.getElementById("t").textContent = "Hello from the sandbox";</script>');
    await page.locator('#ws-file').setInputFiles(html);
    await panel.getByRole('button', { name: 'Preview ws-page.html' }).click();
    const frame = preview.locator('iframe.ws-frame');
    await frame.waitFor();
    assert.equal(await frame.getAttribute('sandbox'), 'allow-scripts');
    assert.match(await frame.getAttribute('src'), /GetWorkspaceFileContent\?FilePath=ws-page\.html/);
    await page.frameLocator('iframe.ws-frame').getByText('Hello from the sandbox').waitFor();
    await shot(page, 'workspace-preview-html');

    const zip = panel.getByRole('link', { name: 'Download zip' });
    const res = await fetch(new URL(await zip.getAttribute('href'), srv.url));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /zip/);
    assert.equal(Buffer.from(await res.arrayBuffer()).subarray(0, 2).toString(), 'PK');

    for (const name of ['ws-note.txt', 'ws-page.html']) {
      page.once('dialog', (d) => d.accept());
      await panel.getByRole('button', { name: `Delete ${name}` }).click();
      await panel.getByRole('button', { name: `Preview ${name}` }).waitFor({ state: 'detached' });
    }
    assert.equal(await preview.isHidden(), true, 'the preview of a deleted file closes');
    const left = (await api(srv.url, 'ListWorkspaceFiles', { AgentId: 'echo-go', Path: '.', Recursive: true })).Entries;
    assert.ok(!left.some((e) => e.Path.startsWith('ws-')), JSON.stringify(left));
    await shot(page, 'workspace-deleted');
    await page.getByRole('button', { name: 'Workspace' }).click();
    assert.equal(await panel.isHidden(), true);
    noProblems();
  });

  test('approval: Reject resumes the run to a rejected completion', T, async () => {
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('please approve deleting keep.txt');
    const card = page.getByRole('group', { name: /Approval request: delete_file/ });
    await card.waitFor();
    await idle();
    await card.getByRole('button', { name: 'Reject' }).click();
    await page.getByText('Rejected: kept keep.txt.').waitFor();
    await idle();
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    const { Messages } = await api(srv.url, 'ListSessionMessages', { SessionId: sessionId });
    assert.equal(Messages.filter((m) => m.Role === 'assistant').at(-1).RunStatus, 'completed');
    await shot(page, 'approval-rejected');
    noProblems();
  });

  test('Stop during a slow run cancels it and the UI shows it', T, async () => {
    await fresh('/?slow=1');
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('hello then stop');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo:' }).waitFor();
    const stop = page.getByRole('button', { name: 'Stop', exact: true });
    await stop.click();
    await idle();
    await lastAssistant().getByRole('status').filter({ hasText: 'Stopped' }).waitFor();
    const sessionId = decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);
    const { Messages } = await api(srv.url, 'ListSessionMessages', { SessionId: sessionId });
    assert.equal(Messages.filter((m) => m.Role === 'assistant').at(-1).RunStatus, 'cancelled');
    assert.equal((await api(srv.url, 'GetSession', { SessionId: sessionId })).Session.ActiveRunStatus === 'in_progress', false);
    await shot(page, 'stopped');
    noProblems();
  });

  test('feedback thumbs and comment survive a reload', T, async () => {
    await fresh('/');
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('rate me');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo: rate me' }).waitFor();
    await idle();
    let msg = lastAssistant();
    await msg.getByRole('button', { name: 'Bad response' }).click();
    await msg.getByText('Thanks for the feedback').waitFor();
    await msg.getByLabel('Feedback comment').fill('too <short>');
    await msg.getByRole('button', { name: 'Send comment' }).click();
    await msg.getByText('Comment saved').waitFor();
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    msg = lastAssistant();
    await msg.locator('.feedback[data-loaded="true"]').waitFor();
    assert.equal(await msg.getByRole('button', { name: 'Bad response' }).getAttribute('aria-pressed'), 'true');
    assert.equal(await msg.getByRole('button', { name: 'Good response' }).getAttribute('aria-pressed'), 'false');
    assert.equal(await msg.getByLabel('Feedback comment').inputValue(), 'too <short>');
    await shot(page, 'feedback-reloaded');
    noProblems();
  });
});
