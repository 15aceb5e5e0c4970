// ksadk-web, KsADK's own React UI (as the ksadk wheel ships it built), served on one origin
// with `agentengine run` hosting several agents, driven in Chromium: its model picker reaches
// every agent, a pending approval is answered after a reload, and a failed run's checkpoint
// reaches it as resumable (ListSessionCheckpoints) and continues in place with ResumeRun.
//
// ksadk-web: KSADK_WEB_DIR, else scripts/ksadk-web.sh's cache (.ci/run fills it). Without it
// the tests skip, unless CI is set: then they fail. The LangGraph agents run with $PYTHON
// (the test virtualenv, which has langgraph).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ROOT, api, binary, ksadkWebDir, launchBrowser, serveKsadkWeb, shot, startServer, stopServer,
} from '../harness.mjs';

const T = { timeout: 120_000 };
const WEB = ksadkWebDir();
const have = WEB !== '' && existsSync(join(WEB, 'index.html'));
if (!have && process.env.CI) {
  throw new Error(`ksadk-web is missing (KSADK_WEB_DIR or scripts/ksadk-web.sh's cache): run scripts/ksadk-web.sh`);
}
const skip = have ? false : 'ksadk-web is not cached: run scripts/ksadk-web.sh (or set KSADK_WEB_DIR)';

// KsADK Studio's conversation-surface route: ksadk-web asks for it and carries on without
// it; KsADK's runtime server answers it 404 as well (it is Studio's, not the runtime's).
const STUDIO_ONLY = /^\/api\/v1\/agents\/[^/]+\/conversation-surface$/;

// A LangGraph graph that fails in its second node until the file "fixed" exists; its first
// node counts its runs in prepared.log, so a run continued from the failed run's checkpoint
// is seen not to run it again.
const RESUME_GRAPH = `from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

HERE = Path(__file__).parent


class State(MessagesState):
    prepared: bool


def prepare(state: State) -> dict:
    with open(HERE / "prepared.log", "a") as f:
        f.write("ran\\n")
    return {"prepared": True}


def flaky(state: State) -> dict:
    if not (HERE / "fixed").exists():
        raise RuntimeError("the flaky service is down")
    return {"messages": [AIMessage(content="Recovered after prepare: the flaky service answered.")]}


builder = StateGraph(State)
builder.add_node("prepare", prepare)
builder.add_node("flaky", flaky)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "flaky")
builder.add_edge("flaky", END)
graph = builder.compile()
`;

let tmp; let srv; let web; let browser; let page; let resumeDir;
const problems = [];
const calls = [];

function pythonProject(name, files) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  appendFileSync(join(dir, 'agentengine.yaml'), `\npython: ${process.env.PYTHON}\n`);
  return dir;
}

async function send(text) {
  const box = page.locator('textarea');
  await box.fill(text);
  await box.press('Enter');
}

async function pick(agent) {
  await page.locator('button').filter({ hasText: /^(echo-go|langgraph-chat|resume-graph)$/ }).last().click();
  await page.getByRole('menuitemradio', { name: agent, exact: true }).click();
  await assert.doesNotReject(page.locator('button').filter({ hasText: new RegExp(`^${agent}$`) }).last().waitFor());
}

async function newChat() {
  await page.getByRole('button', { name: /新对话/ }).click();
}

const list = () => page.locator('[data-slot=message-list]');

async function sessionOf(text) {
  // The session whose first prompt is text, as ksadk-web's list shows it (every agent's).
  const d = await api(srv.url, 'ListSessions', { AgentId: 'echo-go', PageSize: 100 });
  const s = d.Sessions.find((x) => (x.FirstPrompt || x.Title || '').includes(text));
  assert.ok(s, `no session for ${text}: ${JSON.stringify(d.Sessions)}`);
  return s;
}

describe('ksadk-web against agentengine run with several agents', { skip }, () => {
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'agentengine-ksadk-web-'));
    if (!process.env.PYTHON) throw new Error('set PYTHON (an interpreter with langgraph, e.g. the test virtualenv)');
    const chat = join(tmp, 'langgraph-chat');
    cpSync(join(ROOT, 'examples', 'langgraph-chat'), chat, {
      recursive: true,
      filter: (src) => !/(^|\/)(\.venv|\.agentengine|__pycache__|\.env)(\/|$)/.test(src.slice(ROOT.length)),
    });
    appendFileSync(join(chat, 'agentengine.yaml'), `\npython: ${process.env.PYTHON}\n`);
    resumeDir = pythonProject('resume-graph', {
      'agentengine.yaml': 'name: resume-graph\nframework: langgraph\nentry_point: agent.py\nagent_variable: graph\n',
      'agent.py': RESUME_GRAPH,
    });
    const bin = binary(tmp);
    const env = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY; // the examples' offline models
    try {
      srv = await startServer(bin, ['examples/echo-go', chat, resumeDir]);
    } finally {
      if (env !== undefined) process.env.OPENAI_API_KEY = env;
    }
    web = await serveKsadkWeb(WEB, srv.url);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (u.origin !== web.url) return;
      if (u.pathname.startsWith('/agentengine/')) calls.push({ path: u.pathname, body: r.request().postData() || '', status: r.status(), res: r });
      if (r.status() >= 400 && !STUDIO_ONLY.test(u.pathname)) problems.push(`${r.status()} ${r.request().method()} ${u.pathname}`);
    });
    page.on('console', (m) => {
      // The browser's own line for the Studio-only 404 is the only console error allowed.
      if (m.type() === 'error' && !/status of 404/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${web.url}/`);
    await page.locator('textarea').waitFor();
  });

  after(async () => {
    await browser?.close();
    await web?.close();
    await stopServer(srv);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the model picker reaches each agent: langgraph-chat and echo-go answer for themselves', T, async () => {
    const boot = await api(srv.url, 'GetAgentUiBootstrap', {});
    assert.equal(boot.Agent.AgentId, 'echo-go', 'the first project given is the default agent');
    await pick('langgraph-chat');
    await send('hello from the picker');
    await list().getByText('You said: hello from the picker').waitFor();
    await shot(page, 'ksadk-web-langgraph-chat');
    assert.equal((await sessionOf('hello from the picker')).AgentId, 'langgraph-chat');

    await newChat();
    await pick('echo-go');
    await send('ping the echo agent');
    await list().getByText(/Echo: ping the echo agent/).waitFor();
    await shot(page, 'ksadk-web-echo-go');
    assert.equal((await sessionOf('ping the echo agent')).AgentId, 'echo-go');
    const runs = calls.filter((c) => c.path.endsWith('/RunAgent')).map((c) => JSON.parse(c.body));
    assert.deepEqual(runs.map((r) => [r.AgentId, r.Model]), [['echo-go', 'langgraph-chat'], ['echo-go', 'echo-go']],
      'ksadk-web names its bootstrap agent and sends the pick as Model');
    assert.deepEqual(problems, []);
  });

  test('a pending approval is answered after a reload', T, async () => {
    await newChat();
    await pick('echo-go');
    await send('please approve deleting notes.txt');
    await page.getByRole('button', { name: '批准并继续' }).waitFor();
    await shot(page, 'ksadk-web-approval-asked');
    await page.reload();
    // ksadk-web rebuilds the paused turn from ListSessionMessages: its tool card asks again.
    const approve = page.getByRole('button', { name: /^(允许执行|批准并继续)$/ }).first();
    await approve.waitFor();
    await shot(page, 'ksadk-web-approval-after-reload');
    await approve.click();
    await list().getByText('Approved: deleted notes.txt').waitFor();
    await shot(page, 'ksadk-web-approval-answered');
    assert.equal(await page.getByRole('button', { name: '批准并继续' }).count(), 0);
    const s = await sessionOf('please approve deleting notes.txt');
    assert.equal(s.ActiveRunStatus?.toLowerCase?.() ?? 'completed', 'completed');
    assert.deepEqual(problems, []);
  });

  // ksadk-web 0.8.5 loads a session's checkpoints (when the bootstrap reports Checkpoints)
  // and has the resume code (RunEngine.resumeCheckpoint: GetCheckpointResumePreview, then
  // ResumeRun streamed), but its message list no longer renders the checkpoint panel that
  // called it: the requests are sent from the page as that code sends them.
  test('a failed run\'s checkpoint reaches ksadk-web as resumable and ResumeRun continues it in place', T, async () => {
    const boot = await api(srv.url, 'GetAgentUiBootstrap', {});
    const lc = boot.Capabilities.RunLifecycle;
    assert.ok(lc.Enabled && lc.Checkpoints && lc.CheckpointResume, `RunLifecycle ${JSON.stringify(lc)}`);

    await newChat();
    await pick('resume-graph');
    await send('run the flaky job');
    await list().getByText(/the flaky service is down/).first().waitFor();
    await shot(page, 'ksadk-web-resume-failed');
    const sess = await sessionOf('run the flaky job');
    assert.equal(sess.AgentId, 'resume-graph');

    // On opening the session ksadk-web loads its checkpoints (bootstrap's Checkpoints).
    const before = calls.length;
    await page.reload();
    await list().getByText(/run the flaky job/).first().waitFor();
    const listed = await waitForCall('/ListSessionCheckpoints', before);
    const cps = (await listed.res.json()).Data.Checkpoints;
    const cp = cps.find((c) => c.Resumable);
    assert.ok(cp, `no resumable checkpoint offered: ${JSON.stringify(cps)}`);
    assert.equal(cp.Status, 'failed');

    // ksadk-web's resume (RunEngine.resumeCheckpoint): a preview, then ResumeRun streamed,
    // both naming the bootstrap agent, as the page's own code sends them.
    writeFileSync(join(resumeDir, 'fixed'), '');
    const out = await page.evaluate(async ({ sessionId, runId, checkpointId }) => {
      const post = (action, body) => fetch(`/agentengine/api/v1/${action}`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const pv = await (await post('GetCheckpointResumePreview', { AgentId: 'echo-go', SessionId: sessionId, RunId: runId, CheckpointId: checkpointId })).json();
      const r = await post('ResumeRun', { AgentId: 'echo-go', SessionId: sessionId, RunId: runId, CheckpointId: checkpointId,
        Stream: true, InvocationId: `run_${crypto.randomUUID()}` });
      return { preview: pv, status: r.status, stream: await r.text() };
    }, { sessionId: sess.SessionId, runId: cp.RunId, checkpointId: cp.CheckpointId });
    assert.equal(out.preview.Code, 0, JSON.stringify(out.preview));
    assert.equal(out.status, 200, out.stream);
    assert.match(out.stream, /Recovered after prepare/);
    assert.match(out.stream, /response\.completed/);
    assert.equal(readFileSync(join(resumeDir, 'prepared.log'), 'utf8'), 'ran\n', 'the resumed run ran prepare again');

    await page.reload();
    await list().getByText('Recovered after prepare: the flaky service answered.').waitFor();
    await shot(page, 'ksadk-web-resumed');
    assert.deepEqual(problems, []);
  });
});

async function waitForCall(suffix, from) {
  for (let i = 0; i < 100; i++) {
    const c = calls.slice(from).find((x) => x.path.endsWith(suffix));
    if (c) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`ksadk-web sent no ${suffix}`);
}
