// Chat message views: a user bubble and an assistant turn made of blocks (reasoning,
// text, tool calls, approvals) plus its status line and feedback bar. The same views
// render history (ListSessionMessages) and live streams.
import { copyButton, h, pretty } from './dom.js';
import { svg } from './icons.js';
import { renderMarkdown } from './markdown.js';

/** attachmentChips renders a message's attachments ({name, url}). */
export function attachmentChips(list) {
  if (!list?.length) return null;
  return h('ul', { class: 'attachments', 'aria-label': 'Attachments' },
    list.map((a) => h('li', { class: 'chip' },
      a.url ? h('a', { href: a.url, target: '_blank', rel: 'noopener noreferrer' }, svg('attach'), ' ', a.name) : [svg('attach'), ' ', a.name])));
}

export function userView(text, attachments) {
  return h('article', { class: 'msg user', 'aria-label': 'You' },
    h('div', { class: 'bubble' },
      text ? h('div', { class: 'user-text' }, text) : null,
      attachmentChips(attachments)),
    text ? h('div', { class: 'msg-actions' }, copyButton('Copy message', () => text)) : null);
}

/** decorateCode gives each code block of a rendered Markdown element a copy button. */
function decorateCode(el) {
  for (const pre of el.querySelectorAll('pre')) {
    const wrap = h('div', { class: 'codeblock' });
    pre.replaceWith(wrap);
    wrap.append(pre, copyButton('Copy code', () => (pre.querySelector('code') || pre).textContent, { className: 'icon copy code-copy' }));
  }
}

/** AssistantView is one assistant turn. Blocks are keyed by item id. */
export class AssistantView {
  constructor({ onApprove, onFeedback } = {}) {
    this.onApprove = onApprove;
    this.onFeedback = onFeedback;
    this.blocks = new Map();
    this.body = h('div', { class: 'blocks' });
    this.status = h('div', { class: 'status', role: 'status' });
    this.copy = copyButton('Copy message', () => this.plainText);
    this.copy.hidden = true;
    this.footer = h('div', { class: 'footer' }, this.copy);
    this.el = h('article', { class: 'msg assistant', 'aria-label': 'Assistant' }, this.body, this.status, this.footer);
    this.pending = new Set();
    this.frame = 0;
  }

  // Text ------------------------------------------------------------------
  text(id) {
    let b = this.blocks.get(id);
    if (!b) {
      const el = h('div', { class: 'md text', dataset: { itemId: id } });
      b = { kind: 'text', el, value: '' };
      this.blocks.set(id, b);
      this.body.append(el);
    }
    return b;
  }
  appendText(id, delta) { this.setText(id, this.text(id).value + delta); }
  setText(id, value) {
    const b = this.text(id);
    b.value = value;
    this.schedule(b);
  }
  schedule(b) {
    this.pending.add(b);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }
  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    for (const b of this.pending) {
      if (b.kind === 'text') {
        b.el.innerHTML = renderMarkdown(b.value); // escaped by renderMarkdown
        decorateCode(b.el);
      } else b.pre.textContent = b.value;
    }
    this.pending.clear();
    this.copy.hidden = !this.plainText.trim();
  }
  get plainText() {
    return [...this.blocks.values()].filter((b) => b.kind === 'text').map((b) => b.value).join('\n');
  }

  // Reasoning -------------------------------------------------------------
  reasoning(id, { open = true } = {}) {
    let b = this.blocks.get(id);
    if (!b) {
      const pre = h('div', { class: 'reasoning-text' });
      const el = h('details', { class: 'reasoning', open, dataset: { itemId: id } }, h('summary', {}, 'Reasoning'), pre);
      b = { kind: 'reasoning', el, pre, value: '' };
      this.blocks.set(id, b);
      this.body.append(el);
    }
    return b;
  }
  appendReasoning(id, delta) { this.setReasoning(id, this.reasoning(id).value + delta); }
  setReasoning(id, value) {
    const b = this.reasoning(id);
    b.value = value;
    this.schedule(b);
  }

  // Tools -----------------------------------------------------------------
  tool(id, { name = 'tool', callId = '', args = '', status = 'running', result } = {}) {
    let b = this.blocks.get(id) || (callId && this.blocks.get(`call:${callId}`));
    if (!b) {
      const argsEl = h('pre', { class: 'args' });
      const resultEl = h('pre', { class: 'result', hidden: true });
      const stateEl = h('span', { class: 'tool-state' });
      const el = h('details', { class: 'tool', open: true, dataset: { itemId: id, toolName: name } },
        h('summary', {}, h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, svg('tool')), ' ', h('span', { class: 'tool-name' }, name), ' ', stateEl),
        h('div', { class: 'label' }, 'Arguments'), argsEl,
        h('div', { class: 'label result-label', hidden: true }, 'Result'), resultEl);
      b = { kind: 'tool', el, argsEl, resultEl, stateEl, args: '' };
      this.blocks.set(id, b);
      if (callId) this.blocks.set(`call:${callId}`, b);
      this.body.append(el);
    }
    if (args) this.setToolArgs(id, args, b);
    this.setToolState(b, status);
    if (result !== undefined) this.setToolResult(b, result);
    return b;
  }
  appendToolArgs(id, delta) {
    const b = this.blocks.get(id);
    if (b) { b.args += delta; b.argsEl.textContent = b.args; }
  }
  setToolArgs(id, args, b = this.blocks.get(id)) {
    if (!b) return;
    b.args = typeof args === 'string' ? args : JSON.stringify(args);
    b.argsEl.textContent = pretty(args);
  }
  setToolState(b, status) {
    b.stateEl.textContent = status ? `· ${status}` : '';
    b.el.dataset.status = status || '';
  }
  setToolResult(b, result) {
    b.resultEl.hidden = false;
    b.el.querySelector('.result-label').hidden = false;
    b.resultEl.textContent = pretty(result);
  }
  toolByCall(callId) { return callId ? this.blocks.get(`call:${callId}`) : undefined; }
  /** lastTool is the latest tool block of name still without a result. */
  lastTool(name) {
    const tools = [...new Set(this.blocks.values())].filter((b) => b.kind === 'tool' && b.resultEl.hidden && (!name || b.el.dataset.toolName === name));
    return tools.at(-1);
  }

  // Approvals -------------------------------------------------------------
  approval(id, { name = '', args = '', message = '', active = true, status = '' } = {}) {
    if (this.blocks.has(id)) return this.blocks.get(id);
    const result = h('span', { class: 'approval-result', role: 'status' }, status && status !== 'paused' ? status : '');
    const approve = h('button', { type: 'button', class: 'primary', onclick: () => decide(true) }, 'Approve');
    const reject = h('button', { type: 'button', class: 'danger', onclick: () => decide(false) }, 'Reject');
    const buttons = h('div', { class: 'approval-actions' }, approve, reject);
    buttons.hidden = !active;
    const el = h('section', { class: 'approval', role: 'group', 'aria-label': `Approval request: ${name}`, dataset: { approvalId: id } },
      h('div', { class: 'approval-title' }, svg('alert'), ' Approval required: ', h('strong', {}, name)),
      message ? h('p', {}, message) : null,
      h('pre', { class: 'args' }, pretty(args)),
      buttons, result);
    const decide = async (ok) => {
      approve.disabled = reject.disabled = true;
      result.textContent = ok ? 'Approving…' : 'Rejecting…';
      try {
        await this.onApprove?.(id, ok);
        result.textContent = ok ? 'Approved' : 'Rejected';
        buttons.hidden = true;
      } catch (e) {
        result.textContent = '';
        approve.disabled = reject.disabled = false; // the app has shown the error
      }
    };
    const b = { kind: 'approval', el };
    this.blocks.set(id, b);
    this.body.append(el);
    return b;
  }

  // Status and feedback ---------------------------------------------------
  setStatus(text, kind = '') {
    this.status.textContent = text || '';
    this.status.className = `status ${kind}`;
    this.el.dataset.state = kind;
  }
  setRunning(on) {
    this.el.classList.toggle('running', on);
    if (on) this.setStatus('Working…', 'running');
  }
  setResponseId(responseId) {
    this.responseId = responseId;
    if (!responseId || !this.onFeedback || this.footer.querySelector('.feedback')) return;
    this.feedback = feedbackBar((rating, comment) => this.onFeedback(responseId, rating, comment));
    this.footer.append(this.feedback.el);
  }
  /** setTrace adds the control opening this turn's trace (onOpen shows it). */
  setTrace(onOpen) {
    if (this.footer.querySelector('.trace-open')) return;
    this.footer.append(h('button', { type: 'button', class: 'icon trace-open', 'aria-label': 'Show trace', title: 'Trace of this turn', onclick: onOpen }, svg('trace')));
  }
  /** showFeedback fills the thumbs and comment from stored feedback ({Rating, Comment}). */
  showFeedback(fb) { this.feedback?.show(fb); }
}

function feedbackBar(send) {
  const note = h('span', { class: 'feedback-note', role: 'status' });
  const comment = h('input', { type: 'text', class: 'feedback-comment', placeholder: 'Optional comment', 'aria-label': 'Feedback comment' });
  const saveBtn = h('button', { type: 'submit', class: 'small' }, 'Send comment');
  const form = h('form', { class: 'feedback-form', hidden: true }, comment, saveBtn);
  let rating = '';
  const rate = async (r) => {
    rating = r;
    up.setAttribute('aria-pressed', String(r === 'up'));
    down.setAttribute('aria-pressed', String(r === 'down'));
    note.textContent = '';
    await send(r, comment.value.trim());
    note.textContent = 'Thanks for the feedback';
    form.hidden = false;
  };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    await send(rating, comment.value.trim());
    note.textContent = 'Comment saved';
  });
  const up = h('button', { type: 'button', class: 'icon', 'aria-label': 'Good response', 'aria-pressed': 'false', onclick: () => rate('up') }, svg('thumbUp'));
  const down = h('button', { type: 'button', class: 'icon', 'aria-label': 'Bad response', 'aria-pressed': 'false', onclick: () => rate('down') }, svg('thumbDown'));
  const el = h('div', { class: 'feedback' }, up, down, note, form);
  // show applies stored feedback unless the user has already rated in this view.
  const show = (fb) => {
    if (!fb || rating || !['up', 'down'].includes(fb.Rating)) return;
    rating = fb.Rating;
    up.setAttribute('aria-pressed', String(rating === 'up'));
    down.setAttribute('aria-pressed', String(rating === 'down'));
    comment.value = fb.Comment || '';
    form.hidden = false;
    el.dataset.loaded = 'true';
  };
  return { el, show };
}
