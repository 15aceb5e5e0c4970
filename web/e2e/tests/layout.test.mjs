// Browser tests of the bundled Web UI's layout at phone and desktop sizes, the chat list's
// times and run chips, copy buttons, the agent picker, and how errors and approvals show.
// Each step writes a screenshot to web/e2e/screenshots/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, binary, launchBrowser, shot, startServer, stopServer, watch } from '../harness.mjs';

const T = { timeout: 60_000 };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const LAPTOP = { width: 1024, height: 768 };
let tmp; let srv; let browser; let page; let problems;

async function fresh(size, path = '/') {
  if (page) await page.close();
  page = await browser.context.newPage();
  page.setDefaultTimeout(20_000);
  await page.setViewportSize(size);
  problems = watch(page);
  await page.goto(srv.url + path);
  await page.waitForSelector('body[data-ready="true"]');
}

async function send(text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

async function idle() {
  await page.waitForSelector('body:not(.is-running)');
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
}

const lastAssistant = () => page.locator('.msg.assistant').last();
const width = async (sel) => (await page.locator(sel).boundingBox())?.width ?? 0;
const sessionIdOf = () => decodeURIComponent(/session=([^&]+)/.exec(page.url())[1]);

/** inViewport reports whether an element is visible and inside the viewport. */
async function inViewport(locator) {
  if (!(await locator.isVisible())) return false;
  const box = await locator.boundingBox();
  const vp = page.viewportSize();
  return !!box && box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width + 1 && box.y + box.height <= vp.height + 1;
}

/** openDrawer opens the chat list drawer and waits for it to slide in. */
async function openDrawer() {
  await page.getByRole('button', { name: 'Chat list', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().left >= 0);
}

function noProblems() {
  assert.deepEqual(problems, [], 'no page errors or CSP violations');
}

describe('web UI layout', { timeout: 600_000 }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-web-layout-'));
    srv = await startServer(binary(tmp));
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
  }, { timeout: 300_000 });

  after(async () => {
    await page?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('phone: the chat list is a drawer with New chat; the agent picker stays in the composer', T, async () => {
    await fresh(PHONE);
    const toggle = page.getByRole('button', { name: 'Chat list', exact: true });
    const newChat = page.getByRole('button', { name: /New chat/ });
    assert.equal(await inViewport(toggle), true, 'the drawer toggle is on screen');
    assert.equal(await newChat.isVisible(), false, 'the drawer starts closed');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    const picker = page.getByLabel('Agent');
    assert.equal(await inViewport(picker), true, 'the agent picker is on screen');
    assert.equal(await picker.inputValue(), 'echo-go');
    assert.ok(await width('#messages') >= PHONE.width - 2, 'the chat takes the whole width');
    await shot(page, 'phone-empty');

    await send('hello from a phone');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo: hello from a phone' }).waitFor();
    await idle();
    await shot(page, 'phone-reply');

    await openDrawer();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    assert.equal(await inViewport(newChat), true, 'New chat is reachable');
    const item = page.locator('.sessions li').filter({ hasText: 'hello from a phone' });
    assert.equal(await inViewport(item), true, 'the chat list is reachable');
    await shot(page, 'phone-drawer');

    // New chat closes the drawer and empties the conversation.
    await newChat.click();
    await newChat.waitFor({ state: 'hidden' }); // the drawer closed
    await page.getByRole('heading', { name: 'New chat' }).waitFor();

    // Picking a chat opens it and closes the drawer; Escape closes it too.
    await openDrawer();
    await item.getByRole('button', { name: /^hello from a phone/ }).click();
    await page.getByRole('heading', { name: 'hello from a phone' }).waitFor();
    await newChat.waitFor({ state: 'hidden' }); // the drawer closed
    await openDrawer();
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.body.classList.contains('drawer-open'));
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await newChat.waitFor({ state: 'hidden' });

    // A side panel covers the chat with a way back instead of squeezing it.
    await page.getByRole('button', { name: 'Workspace' }).click();
    const panel = page.getByRole('complementary', { name: 'Workspace' });
    await panel.waitFor();
    assert.ok(await width('#workspace') >= PHONE.width - 2);
    await shot(page, 'phone-workspace');
    await panel.getByRole('button', { name: 'Close panel' }).click();
    assert.equal(await panel.isHidden(), true);
    noProblems();
  });

  test('desktop: one side panel at a time, and the chat keeps its width', T, async () => {
    await fresh(DESKTOP);
    assert.equal(await page.getByRole('button', { name: 'Chat list', exact: true }).isVisible(), false, 'no drawer toggle on a wide screen');
    assert.equal(await inViewport(page.getByRole('button', { name: /New chat/ })), true);
    await page.getByRole('button', { name: 'Workspace' }).click();
    await page.getByRole('button', { name: 'Events' }).click();
    assert.equal(await page.getByRole('complementary', { name: 'Workspace' }).isHidden(), true, 'opening Events closes the Workspace');
    assert.equal(await page.getByRole('button', { name: 'Workspace' }).getAttribute('aria-expanded'), 'false');
    assert.ok(await width('#messages') >= 600, `chat width ${await width('#messages')}`);
    await shot(page, 'desktop-events-panel');

    // Narrower, the panel floats over the chat: the chat keeps its width.
    await page.setViewportSize(LAPTOP);
    assert.ok(await width('#messages') >= LAPTOP.width - 280, `chat width ${await width('#messages')}`);
    await shot(page, 'laptop-events-panel');
    await page.getByRole('complementary', { name: 'Event inspector' }).getByRole('button', { name: 'Close panel' }).click();
    assert.equal(await page.getByRole('button', { name: 'Events' }).getAttribute('aria-expanded'), 'false');
    noProblems();
  });

  test('chat list: times and run status chips', T, async () => {
    await fresh(DESKTOP);
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('please approve deleting report.txt');
    await page.getByRole('group', { name: /Approval request: delete_file/ }).waitFor();
    await idle();
    const waiting = page.locator('.sessions li').filter({ hasText: 'please approve deleting report.txt' });
    await waiting.locator('.run-chip[data-status="interrupted"]').filter({ hasText: 'Needs approval' }).waitFor();
    const time = waiting.locator('time.session-time');
    assert.match(await time.innerText(), /just now|min ago/);
    assert.ok(!Number.isNaN(Date.parse(await time.getAttribute('datetime'))));

    // No feedback buttons under a turn that still waits for its approval.
    assert.equal(await lastAssistant().getByRole('button', { name: 'Good response' }).count(), 0);
    await shot(page, 'list-needs-approval');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByText('Approved: deleted report.txt.').waitFor();
    await idle();
    await waiting.locator('.run-chip').waitFor({ state: 'detached' });
    await lastAssistant().getByRole('button', { name: 'Good response' }).waitFor();

    // A running chat shows it; a stopped one says so.
    await fresh(DESKTOP, '/?slow=1');
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('a slow one');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo:' }).waitFor();
    const running = page.locator('.sessions li').filter({ hasText: 'a slow one' });
    await running.locator('.run-chip[data-status="in_progress"]').waitFor();
    await shot(page, 'list-running');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await idle();
    await running.locator('.run-chip[data-status="cancelled"]').filter({ hasText: 'Stopped' }).waitFor();
    await shot(page, 'list-stopped');
    noProblems();
  });

  test('copy buttons copy a message and a code block', T, async () => {
    await fresh(DESKTOP);
    await page.getByRole('button', { name: /New chat/ }).click();
    await send('copy me please');
    await lastAssistant().locator('.text').filter({ hasText: 'Echo: copy me please' }).waitFor();
    await idle();
    const clip = () => page.evaluate(() => navigator.clipboard.readText());
    await lastAssistant().getByRole('button', { name: 'Copy message' }).click();
    assert.equal(await clip(), 'Echo: copy me please');
    await page.locator('.msg.user').last().getByRole('button', { name: 'Copy message' }).click();
    assert.equal(await clip(), 'copy me please');

    // The echo agent folds newlines, so a reply with a code block is rendered by the
    // page's own message view, as a streamed one is.
    await page.evaluate(async () => {
      const { AssistantView } = await import('/static/js/messages.js');
      const v = new AssistantView();
      v.setText('t', 'Run this:\n\n```js\nconsole.log("hi");\nlet x = 1 < 2;\n```\n');
      v.flush();
      v.el.id = 'code-turn';
      document.getElementById('messages').append(v.el);
    });
    const turn = page.locator('#code-turn');
    await turn.locator('.codeblock').hover();
    await turn.getByRole('button', { name: 'Copy code' }).click();
    assert.equal(await clip(), 'console.log("hi");\nlet x = 1 < 2;');
    await turn.getByRole('button', { name: 'Copied' }).waitFor();
    await shot(page, 'copy-buttons');
    noProblems();
  });

  test('a failed run shows its error once, in the message', T, async () => {
    await fresh(PHONE);
    await send('fail');
    await lastAssistant().getByRole('status').filter({ hasText: /fail/ }).waitFor();
    await idle();
    assert.equal(await page.locator('#error').isHidden(), true, 'no second copy in the banner');
    assert.equal(await page.getByText(/failing because the input was/).count(), 1);
    await shot(page, 'phone-failed');
    const { Sessions } = await api(srv.url, 'ListSessions', { AgentId: 'echo-go' });
    assert.equal(Sessions.find((s) => s.SessionId === sessionIdOf()).ActiveRunStatus, 'failed');
    noProblems();
  });
});
