// The bundled agentengine Web UI. Talks only to the Web UI action API.
//
// Test/demo knob: with ?slow=1 in the page URL every RunAgent carries
// ModelOptions {deltas: 200, delay_ms: 20}, which the echo example agent turns into a
// slow run (used by the reconnect-after-refresh browser test). A badge shows it is on.
import { ApiError, call, newId, stream, subscribe, upload } from './api.js';
import { h, clear } from './dom.js';
import { svg, fillIcons } from './icons.js';
import { AssistantView, userView } from './messages.js';
import { responsesHandler, subscriptionHandler, isTerminal } from './events.js';
import { SessionList, sessionTitle } from './sessions.js';
import { Inspector } from './inspector.js';
import { Workspace } from './workspace.js';
import { TraceDialog } from './trace.js';
import { initTheme } from './theme.js';

const $ = (id) => document.getElementById(id);
const SLOW = new URLSearchParams(location.search).has('slow');
const SLOW_OPTIONS = { deltas: 200, delay_ms: 20 };

const state = {
  agentId: '',
  agents: [],
  sessionId: '',
  sessions: [],
  run: null, // {invocationId, view}
  attachments: [], // FileData of uploaded files waiting to be sent
  loadToken: 0,
  traces: false, // the server keeps traces (GetRunTrace)
};

// Errors -------------------------------------------------------------------
function showError(e) {
  if (e?.name === 'AbortError') return;
  const msg = e instanceof ApiError ? e.message : (e?.message || String(e));
  $('error-text').textContent = msg;
  $('error').hidden = false;
  console.error(e);
}
function clearError() { $('error').hidden = true; }
const guard = (fn) => async (...args) => { try { return await fn(...args); } catch (e) { showError(e); return undefined; } };

// Layout -------------------------------------------------------------------
const narrow = window.matchMedia('(max-width: 760px)');

/** setDrawer opens or closes the chat list drawer (narrow screens only). */
function setDrawer(open) {
  open = open && narrow.matches;
  document.body.classList.toggle('drawer-open', open);
  $('toggle-sidebar').setAttribute('aria-expanded', String(open));
  $('drawer-backdrop').hidden = !open;
  if (open) $('new-chat').focus();
}

/** setPanel shows one side panel ("inspector", "workspace") or none: two would squeeze the chat. */
function setPanel(name) {
  for (const [id, toggle] of [['inspector', 'toggle-inspector'], ['workspace', 'toggle-workspace']]) {
    const open = id === name;
    $(id).hidden = !open;
    $(toggle).setAttribute('aria-expanded', String(open));
  }
  if (name === 'inspector') inspector.load(state.sessionId, state.agentId);
  if (name === 'workspace') workspace.load();
}

// Sessions -----------------------------------------------------------------
const list = new SessionList($('sessions'), $('search'), {
  onSelect: guard((id) => { setDrawer(false); return openSession(id); }),
  onRename: guard(async (id, title) => {
    await call('RenameSession', { AgentId: state.agentId, SessionId: id, Title: title });
    await loadSessions();
  }),
  onDelete: guard(async (id) => {
    await call('DeleteSession', { AgentId: state.agentId, SessionId: id });
    if (id === state.sessionId) newChat();
    await loadSessions();
  }),
});
const inspector = new Inspector($('inspector'), $('events'), { onError: showError });
let traces = null;
const traceDialog = () => (traces ||= new TraceDialog());
const workspace = new Workspace($('workspace'), {
  list: $('ws-files'), preview: $('ws-preview'), file: $('ws-file'), refresh: $('ws-refresh'),
  zip: $('ws-zip'), root: $('ws-root'), status: $('ws-status'),
}, { agentId: () => state.agentId, onError: showError });

async function loadSessions() {
  const data = await call('ListSessions', { AgentId: state.agentId, AgentOnly: true, Page: 1, PageSize: 100 });
  state.sessions = data.Sessions || [];
  list.set(state.sessions, state.sessionId);
  updateTitle();
}

function updateTitle() {
  const s = state.sessions.find((x) => x.SessionId === state.sessionId);
  $('chat-title').textContent = s ? sessionTitle(s) : 'New chat';
}

function setHash(id) {
  const url = new URL(location.href);
  url.hash = id ? `session=${encodeURIComponent(id)}` : '';
  history.replaceState(null, '', url);
}

function newChat() {
  if (state.run) return;
  state.sessionId = '';
  state.loadToken++;
  setHash('');
  clear($('messages'));
  const agent = state.agents.find((a) => a.id === state.agentId);
  $('messages').append(h('div', { class: 'placeholder' },
    h('p', {}, 'Start a conversation with ', h('strong', {}, agent?.name || state.agentId), '.'),
    agent?.description ? h('p', { class: 'small' }, agent.description) : null));
  list.select('');
  updateTitle();
  inspector.load('', state.agentId);
  $('prompt').focus();
}

// History ------------------------------------------------------------------
/** loadFeedback fills a rendered turn's thumbs from GetResponseFeedback (null: none yet). */
function loadFeedback(view, responseId, token) {
  const sessionId = state.sessionId;
  call('GetResponseFeedback', { AgentId: state.agentId, SessionId: sessionId, ResponseId: responseId })
    .then((d) => { if (token === state.loadToken && d?.Feedback) view.showFeedback(d.Feedback); })
    .catch((e) => { if (!(e instanceof ApiError && e.status === 404)) console.warn('GetResponseFeedback', e); });
}

function assistantView() {
  return new AssistantView({
    onApprove: (id, approve) => runTurn({ ResponsesInput: [{ type: 'mcp_approval_response', approval_request_id: id, approve }] }, { echo: null }),
    onFeedback: async (responseId, rating, comment) => {
      try {
        await call('UpsertResponseFeedback', { AgentId: state.agentId, SessionId: state.sessionId, ResponseId: responseId, Rating: rating, Comment: comment });
      } catch (e) { showError(e); throw e; }
    },
  });
}

const STATUS_TEXT = { failed: ['Run failed', 'error'], error: ['Run failed', 'error'], cancelled: ['Stopped', 'warn'], canceled: ['Stopped', 'warn'], interrupted: ['Waiting for approval', 'warn'], incomplete: ['Incomplete', 'warn'] };

function renderHistory(messages) {
  const box = $('messages');
  const token = state.loadToken;
  clear(box);
  let lastView = null;
  messages.forEach((m, idx) => {
    if (m.Role === 'user') {
      const atts = (m.Attachments || []).map((a) => ({ name: a.name || a.file_uri, url: a.url }));
      const text = m.Content?.text || '';
      if (text || atts.length) box.append(userView(text, atts));
      return;
    }
    if (m.Role !== 'assistant') return;
    const v = assistantView();
    v.invocationId = m.InvocationId;
    const isLast = idx === messages.length - 1;
    const blocks = m.Blocks?.length ? m.Blocks : [{ Type: 'text', Content: m.Content?.text || '' }];
    blocks.forEach((b, i) => {
      const key = `${m.MessageId}:${i}`;
      if (b.Type === 'thinking') { v.reasoning(key, { open: false }); v.setReasoning(key, b.Content || ''); }
      else if (b.Type === 'text') v.setText(key, b.Content || '');
      else if (b.Type === 'tool') v.tool(key, { name: b.Name, callId: b.ToolCallId, args: b.Args ?? '', status: b.Status, result: b.Result });
      else if (b.Type === 'approval') {
        v.approval(b.ApprovalRequestId || key, { name: b.Name, args: b.Args ?? '', message: b.ApprovalMessage,
          active: isLast && m.RunStatus === 'interrupted' && b.Status === 'paused', status: b.Status });
      }
    });
    const st = STATUS_TEXT[m.RunStatus];
    if (st && (m.RunStatus !== 'interrupted' || isLast)) v.setStatus(st[0], st[1]);
    // No feedback on a turn that is still running or still waits for an approval.
    const waiting = m.RunStatus === 'in_progress' || (m.RunStatus === 'interrupted' && isLast);
    if (state.traces && m.InvocationId && m.RunStatus !== 'in_progress') {
      const ref = { agentId: state.agentId, sessionId: state.sessionId, invocationId: m.InvocationId };
      v.setTrace(() => traceDialog().open(ref));
    }
    if (m.ResponseId && !waiting) {
      v.setResponseId(m.ResponseId);
      loadFeedback(v, m.ResponseId, token);
    }
    v.flush();
    box.append(v.el);
    lastView = v;
  });
  if (!box.firstChild) box.append(h('p', { class: 'placeholder' }, 'No messages yet.'));
  scrollDown(true);
  return lastView;
}

async function openSession(id, { reattach = true } = {}) {
  if (state.run && id !== state.sessionId) return;
  const token = ++state.loadToken;
  state.sessionId = id;
  setHash(id);
  list.select(id);
  updateTitle();
  const [msgs, sess] = await Promise.all([
    call('ListSessionMessages', { AgentId: state.agentId, SessionId: id, IncludeReasoning: true, IncludeToolEvents: true, IncludeAttachments: true, Limit: 200 }),
    call('GetSession', { AgentId: state.agentId, SessionId: id }),
  ]);
  if (token !== state.loadToken) return;
  const last = renderHistory(msgs.Messages || []);
  inspector.load(id, state.agentId);
  const s = sess.Session;
  if (reattach && s.ActiveRunStatus === 'in_progress' && s.ActiveInvocationId && !state.run) {
    const reuse = last && last.invocationId === s.ActiveInvocationId ? last : null;
    // Not awaited: the page is usable (and marked ready) while the run is followed.
    reattachRun(s.ActiveInvocationId, Math.max(msgs.LatestSeqId || 0, s.LatestSeqId || 0), reuse).catch(showError);
  }
}

// Running ------------------------------------------------------------------
function setRunning(run) {
  state.run = run;
  $('send').hidden = !!run;
  $('stop').hidden = !run;
  $('stop').disabled = false;
  $('new-chat').disabled = !!run;
  document.body.classList.toggle('is-running', !!run);
  if (run) run.view.setRunning(true);
}

function scrollDown(force = false) {
  const box = $('messages');
  if (force || box.scrollHeight - box.scrollTop - box.clientHeight < 160) box.scrollTop = box.scrollHeight;
}

/** runTurn sends one RunAgent (Stream:true, responses) and renders its stream. */
async function runTurn(extra, { echo }) {
  if (state.run) throw new Error('A run is already in progress');
  clearError();
  if (!state.sessionId) {
    const d = await call('CreateSession', { AgentId: state.agentId });
    state.sessionId = d.Session.SessionId;
    state.loadToken++;
    setHash(state.sessionId);
    clear($('messages'));
  }
  const box = $('messages');
  box.querySelector('.placeholder')?.remove();
  if (echo) box.append(echo);
  const view = assistantView();
  box.append(view.el);
  const invocationId = newId('inv');
  setRunning({ invocationId, view });
  scrollDown(true);
  const result = {};
  const body = { AgentId: state.agentId, SessionId: state.sessionId, InvocationId: invocationId, Stream: true, ApiFormat: 'responses', ...extra };
  if (SLOW) body.ModelOptions = SLOW_OPTIONS;
  const handler = responsesHandler(view, result);
  const sessionId = state.sessionId;
  let listed = false;
  let failure = null; // a failed request (the banner); a failed run shows in its message
  try {
    await stream('RunAgent', body, (f) => {
      handler(f);
      scrollDown();
      if (!listed) { listed = true; loadSessions().catch(() => {}); } // the chat list shows it running
    });
  } catch (e) {
    failure = e;
  } finally {
    view.flush();
    view.setRunning(false);
    setRunning(null);
  }
  if (failure && !result.status) {
    if (!view.plainText) view.el.remove();
    else view.setStatus('The stream was interrupted', 'warn');
    showError(failure);
  } else if (result.error) {
    view.setStatus(result.error, 'error');
  }
  await afterRun(sessionId, !!(failure || result.error));
}

async function afterRun(sessionId, keepView) {
  workspace.load(); // a run may have changed files
  await loadSessions().catch(showError);
  if (sessionId === state.sessionId && !keepView) await openSession(sessionId, { reattach: false }).catch(showError);
  else inspector.load(state.sessionId, state.agentId);
}

/** reattachRun follows a run still in progress (after a page refresh) with SubscribeRunEvents. */
async function reattachRun(invocationId, afterSeqId, reuse) {
  const view = reuse || assistantView();
  if (!reuse) $('messages').append(view.el);
  view.el.dataset.reattached = 'true';
  setRunning({ invocationId, view });
  const sessionId = state.sessionId;
  const st = { lastSeq: afterSeqId, done: false, terminal: false };
  const handler = subscriptionHandler(view, st);
  try {
    for (let attempt = 0; !st.done && attempt < 20; attempt++) {
      try {
        await subscribe({ sessionId, invocationId, agentId: state.agentId, afterSeqId: st.lastSeq }, (f) => { handler(f); scrollDown(); });
      } catch (e) {
        if (e instanceof ApiError) throw e;
      }
      if (!st.done) await new Promise((r) => setTimeout(r, 500 * Math.min(attempt + 1, 6)));
    }
  } catch (e) {
    showError(e);
  } finally {
    view.flush();
    view.setRunning(false);
    setRunning(null);
  }
  await afterRun(sessionId, false);
}

// Composer -----------------------------------------------------------------
function renderPending() {
  const ul = $('pending');
  clear(ul);
  state.attachments.forEach((a, i) => ul.append(h('li', { class: 'chip' }, svg('attach'), ' ', a.displayName,
    h('button', { type: 'button', class: 'icon small', 'aria-label': `Remove ${a.displayName}`, onclick: () => { state.attachments.splice(i, 1); renderPending(); } }, svg('close')))));
}

async function onFiles(e) {
  const files = [...e.target.files];
  e.target.value = '';
  for (const f of files) {
    const chip = h('li', { class: 'chip uploading' }, `Uploading ${f.name}…`);
    $('pending').append(chip);
    try {
      state.attachments.push(await upload(f));
    } catch (err) {
      showError(err);
    } finally {
      chip.remove();
    }
  }
  renderPending();
}

async function onSubmit(e) {
  e.preventDefault();
  if (state.run) return;
  const text = $('prompt').value.trim();
  const atts = state.attachments.slice();
  if (!text && !atts.length) return;
  const content = [];
  if (text) content.push({ type: 'input_text', text });
  for (const a of atts) content.push({ type: 'input_file', file_url: a.fileUri, filename: a.displayName });
  $('prompt').value = '';
  state.attachments = [];
  renderPending();
  const echo = userView(text, atts.map((a) => ({ name: a.displayName })));
  await runTurn({ ResponsesInput: [{ role: 'user', content }] }, { echo });
}

async function onStop() {
  const run = state.run;
  if (!run) return;
  $('stop').disabled = true;
  await call('CancelRun', { AgentId: state.agentId, SessionId: state.sessionId, InvocationId: run.invocationId });
}

// Agents -------------------------------------------------------------------
function describeAgent() {
  const desc = state.agents.find((a) => a.id === state.agentId)?.description || '';
  $('agent-desc').textContent = desc;
  $('agent').title = desc;
}

// Agents that cannot serve, or serve their last good version because a reload of edited
// code failed, are shown with their error until it is fixed (checked again every few
// seconds, so a save that fixes it clears the banner).
const PROBLEMS_EVERY_MS = 4000;
function showProblems(problems) {
  const box = $('agent-problems');
  clear(box);
  for (const p of problems || []) {
    const what = p.Kind === 'reload_failed'
      ? `${p.AgentId}: the last edit did not load; the previous version still answers.`
      : `${p.AgentId} is unavailable.`;
    box.append(h('div', {}, h('strong', {}, what), '\n' + p.Error));
  }
  box.hidden = !box.childElementCount;
}
async function watchProblems() {
  try { showProblems((await call('GetAgentUiBootstrap', {})).AgentProblems); } catch { /* the next check tries again */ }
  setTimeout(watchProblems, PROBLEMS_EVERY_MS);
}

async function loadAgents() {
  const [boot, models] = await Promise.all([
    call('GetAgentUiBootstrap', {}),
    call('ListAgentModels', {}).catch(() => null),
  ]);
  let agents = (boot.Agents || (boot.Agent ? [boot.Agent] : [])).map((a) => ({ id: a.AgentId, name: a.Name || a.AgentId, description: a.Description || '' }));
  if (!agents.length && models) agents = (models.Models || []).map((m) => ({ id: m.id, name: m.name || m.id, description: m.description || '' }));
  state.agents = agents;
  const saved = localStorage.getItem('agentengine.agent');
  state.agentId = agents.find((a) => a.id === saved)?.id || boot.Agent?.AgentId || agents[0]?.id || '';
  for (const a of agents) a.framework = (boot.Agents || []).find((x) => x.AgentId === a.id)?.Framework || a.framework || '';
  const sel = $('agent');
  clear(sel);
  for (const a of agents) sel.append(h('option', { value: a.id, selected: a.id === state.agentId }, a.framework ? `${a.name} · ${a.framework}` : a.name));
  sel.value = state.agentId;
  describeAgent();
  $('file').disabled = boot.Capabilities?.Attachments === false;
  state.traces = boot.Capabilities?.Traces === true;
  showProblems(boot.AgentProblems);
}

async function onAgentChange() {
  if (state.run) { $('agent').value = state.agentId; return; }
  state.agentId = $('agent').value;
  localStorage.setItem('agentengine.agent', state.agentId);
  describeAgent();
  newChat();
  await loadSessions();
  workspace.closePreview();
  workspace.load();
}

// Start --------------------------------------------------------------------
async function main() {
  fillIcons();
  initTheme($('theme'));
  $('slow-badge').hidden = !SLOW;
  $('error-close').addEventListener('click', clearError);
  $('composer').addEventListener('submit', guard(onSubmit));
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('composer').requestSubmit(); }
  });
  $('stop').addEventListener('click', guard(onStop));
  $('file').addEventListener('change', guard(onFiles));
  $('new-chat').addEventListener('click', () => { setDrawer(false); newChat(); });
  $('toggle-sidebar').addEventListener('click', () => setDrawer(!document.body.classList.contains('drawer-open')));
  $('close-sidebar').addEventListener('click', () => { setDrawer(false); $('toggle-sidebar').focus(); });
  $('drawer-backdrop').addEventListener('click', () => setDrawer(false));
  narrow.addEventListener('change', () => setDrawer(false));
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    if (document.body.classList.contains('drawer-open')) { setDrawer(false); $('toggle-sidebar').focus(); }
  });
  $('agent').addEventListener('change', guard(onAgentChange));
  $('toggle-inspector').addEventListener('click', () => setPanel($('inspector').hidden ? 'inspector' : ''));
  $('inspector-refresh').addEventListener('click', () => inspector.load(state.sessionId, state.agentId));
  $('toggle-workspace').addEventListener('click', () => setPanel($('workspace').hidden ? 'workspace' : ''));
  for (const b of document.querySelectorAll('.panel-close')) b.addEventListener('click', () => { setPanel(''); $(`toggle-${b.dataset.panel}`).focus(); });

  await loadAgents();
  await loadSessions();
  const m = /session=([^&]+)/.exec(location.hash);
  const id = m ? decodeURIComponent(m[1]) : '';
  if (id && state.sessions.some((s) => s.SessionId === id)) await openSession(id);
  else newChat();
  document.body.dataset.ready = 'true';
  setTimeout(watchProblems, PROBLEMS_EVERY_MS);
}

main().catch((e) => { showError(e); document.body.dataset.ready = 'error'; });
void isTerminal;
