// agent-chat-ui, LangChain's open-source chat UI for LangGraph servers, pointed at agentengine
// and driven in Chromium: set up through its own form (server URL, assistant id), a
// conversation with a tool call, then an interrupt answered in the UI's agent-inbox view.
//
// The UI is built from its published source (create-agent-chat-app's Vite template, pinned in
// web/agent-chat-ui/package.json) by web/agent-chat-ui/build.mjs, cached; .ci/run builds it.
// Without node_modules there the tests skip, unless CI is set: then they fail. The graph
// runs with $PYTHON (the test virtualenv, which has langgraph).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { ROOT, binary, launchBrowser, shot, startServer, stopServer } from '../harness.mjs';

const T = { timeout: 180_000 };
const UI_PKG = join(ROOT, 'web', 'agent-chat-ui');
const have = existsSync(join(UI_PKG, 'node_modules', 'create-agent-chat-app', 'templates', 'vite'));
if (!have && process.env.CI) throw new Error('agent-chat-ui is not installed: npm ci in web/agent-chat-ui');
const skip = have ? false : 'agent-chat-ui is not installed: run npm ci in web/agent-chat-ui';

// The graph: examples/langgraph-chat's offline model (weather -> get_weather, "send an email"
// -> send_email), whose send_email waits for a person through interrupt() in the shape
// LangGraph's prebuilt HumanInterrupt has, which agent-chat-ui's inbox view answers.
const GRAPH = `from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from offline_model import OfflineChatModel


@tool
def get_weather(city: str) -> str:
    """Return the current weather for a city."""
    return f"It is sunny and 22 degrees in {city}."


@tool
def send_email(to: str, body: str) -> str:
    """Send an email (needs a person's approval)."""
    return f"Email sent to {to}."


TOOLS = {t.name: t for t in (get_weather, send_email)}
model = OfflineChatModel().bind_tools(list(TOOLS.values()))


def last_ai(state: MessagesState) -> AIMessage:
    return next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))


async def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await model.ainvoke(state["messages"])]}


def route(state: MessagesState) -> str:
    return "tools" if last_ai(state).tool_calls else END


async def run_tools(state: MessagesState) -> dict[str, Any]:
    out = []
    for call in last_ai(state).tool_calls:
        if call["name"] == "send_email":
            [answer] = interrupt([{  # LangGraph's HumanInterrupt, answered by a list of one HumanResponse
                "action_request": {"action": "send_email", "args": call["args"]},
                "config": {"allow_ignore": True, "allow_respond": True, "allow_edit": False, "allow_accept": True},
                "description": f"Send an email to {call['args'].get('to')}?",
            }])
            if answer["type"] != "accept":
                out.append(ToolMessage(content="Not sent: declined.", tool_call_id=call["id"], name=call["name"]))
                continue
        out.append(await TOOLS[call["name"]].ainvoke(call))
    return {"messages": out}


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("tools", run_tools)
builder.add_edge(START, "model")
builder.add_conditional_edges("model", route, ["tools", END])
builder.add_edge("tools", "model")
graph = builder.compile()
`;

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
  '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.png': 'image/png' };

/** serveStatic serves a single-page app: its files, index.html for any other path. */
async function serveStatic(dir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = normalize(join(dir, path));
    if (!file.startsWith(dir + sep) || !existsSync(file) || path === '/') file = join(dir, 'index.html');
    res.writeHead(200, { 'Content-Type': MIME[extname(file)] || 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

let tmp; let srv; let web; let browser; let page;
const problems = [];
const requests = [];

async function send(text) {
  const box = page.locator('textarea');
  await box.fill(text);
  await box.press('Enter');
}

describe('agent-chat-ui against agentengine', { skip }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-agent-chat-ui-'));
    if (!process.env.PYTHON) throw new Error('set PYTHON (an interpreter with langgraph, e.g. the test virtualenv)');
    const dist = execFileSync('node', [join(UI_PKG, 'build.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    const proj = join(tmp, 'inbox-graph');
    mkdirSync(proj);
    writeFileSync(join(proj, 'agent.py'), GRAPH);
    copyFileSync(join(ROOT, 'examples', 'langgraph-chat', 'offline_model.py'), join(proj, 'offline_model.py'));
    writeFileSync(join(proj, 'agentengine.yaml'),
      `name: inbox-graph\nframework: langgraph\nentry_point: agent.py\nagent_variable: graph\npython: ${process.env.PYTHON}\n`);
    const env = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      srv = await startServer(binary(tmp), [proj]);
    } finally {
      if (env !== undefined) process.env.OPENAI_API_KEY = env;
    }
    web = await serveStatic(dist);
    // Only DejaVu: the UI's font stack ends in "Noto Color Emoji", which this machine's
    // fontconfig otherwise picks for digits and spaces (keycap glyphs), garbling screenshots.
    browser = await launchBrowser({ fonts: ['/usr/share/fonts/truetype/dejavu'] });
    page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (u.origin !== srv.url) return;
      requests.push(`${r.request().method()} ${u.pathname}`);
      if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${u.pathname}`);
    });
  });

  after(async () => {
    await browser?.close();
    await web?.close();
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('set up through its form, it talks to agentengine: a tool call, then an interrupt accepted in the UI', T, async () => {
    await page.goto(`${web.url}/`);
    await page.locator('input[name=apiUrl]').fill(srv.url);
    await page.locator('input[name=assistantId]').fill('inbox-graph');
    await shot(page, 'agent-chat-ui-setup');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('textarea').waitFor();

    await send('what is the weather in Paris');
    await page.getByText('Done. get_weather returned: It is sunny and 22 degrees in Paris.').waitFor();
    // The tool call is shown with its name and arguments.
    await page.getByText('get_weather').first().waitFor();
    await page.getByText('Paris').first().waitFor();
    await shot(page, 'agent-chat-ui-tool-call');
    const thread = new URL(page.url()).searchParams.get('threadId');
    assert.ok(thread, `the UI names the thread it created in its URL: ${page.url()}`);

    await send('send an email to bob');
    // The inbox view of the pending HumanInterrupt: its action's arguments and the answers
    // its config allows (accept, respond, ignore; no edit).
    const accept = page.getByRole('button', { name: 'Accept' });
    await accept.waitFor();
    await page.getByRole('button', { name: 'Send Response' }).waitFor();
    await page.getByRole('button', { name: 'Ignore' }).waitFor();
    await page.getByText('Notes on bob.').last().scrollIntoViewIfNeeded();
    await shot(page, 'agent-chat-ui-interrupt');
    const state = await (await fetch(`${srv.url}/threads/${thread}/state`)).json();
    assert.equal(state.interrupts?.length, 1, JSON.stringify(state));
    assert.equal(state.interrupts[0].value[0].action_request.action, 'send_email');
    assert.equal(state.interrupts[0].value[0].description, 'Send an email to bob@example.com?');

    await accept.click();
    const done = page.getByText('Done. send_email returned: Email sent to bob@example.com.');
    await done.waitFor();
    await done.scrollIntoViewIfNeeded();
    await shot(page, 'agent-chat-ui-interrupt-accepted');
    const th = await (await fetch(`${srv.url}/threads/${thread}`)).json();
    assert.equal(th.status, 'idle');
    const types = th.values.messages.map((m) => m.type);
    assert.deepEqual(types, ['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']);
    assert.ok(requests.some((r) => r.endsWith('/runs/stream')), requests.join('\n'));

    // Reloaded, the UI reads the thread back from agentengine (its history).
    await page.reload();
    await page.getByText('Done. send_email returned: Email sent to bob@example.com.').waitFor();
    await page.getByText('Done. get_weather returned: It is sunny and 22 degrees in Paris.').waitFor();
    assert.ok(requests.filter((r) => r.endsWith('/history')).length > 0, requests.join('\n'));
    await shot(page, 'agent-chat-ui-reloaded');
    assert.deepEqual(problems, []);
  });
});
