// The trace view of one assistant turn: a waterfall of the spans the server still keeps
// for the run (GetRunTrace), each with its offset, duration and attributes. Message
// contents appear only when the agent records them (the GenAI capture switch).
import { call } from './api.js';
import { h, clear, pretty } from './dom.js';
import { svg } from './icons.js';

/** fmtMs words a duration in milliseconds: 40µs, 4.85ms, 1.23s. */
export function fmtMs(ms) {
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : Math.round(ms)}ms`;
  return `${(ms / 1000).toFixed(2)}s`;
}

// Attributes shown on a span's row (the rest are in its details).
const FACTS = [
  ['gen_ai.request.model', (v) => `model ${v}`],
  ['gen_ai.response.model', (v) => `model ${v}`],
  ['gen_ai.tool.name', (v) => `tool ${v}`],
  ['gen_ai.usage.input_tokens', (v) => `in ${v} tok`],
  ['gen_ai.usage.output_tokens', (v) => `out ${v} tok`],
  ['agentengine.run.status', (v) => String(v)],
  ['http.response.status_code', (v) => `HTTP ${v}`],
];
// Content attributes of the GenAI conventions, shown as blocks when recorded.
const CONTENT = [
  ['gen_ai.tool.call.arguments', 'Arguments'],
  ['gen_ai.tool.call.result', 'Result'],
  ['gen_ai.input.messages', 'Input messages'],
  ['gen_ai.output.messages', 'Output messages'],
];

/** order returns the spans depth first (children by start), each with its depth. */
function order(spans) {
  const ids = new Set(spans.map((s) => s.SpanId));
  const kids = new Map();
  for (const s of spans) {
    const p = s.ParentSpanId && ids.has(s.ParentSpanId) ? s.ParentSpanId : '';
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(s);
  }
  const out = [];
  const walk = (parent, depth) => {
    for (const s of (kids.get(parent) || []).sort((a, b) => a.OffsetMs - b.OffsetMs)) {
      out.push({ span: s, depth });
      walk(s.SpanId, depth + 1);
    }
  };
  walk('', 0);
  return out;
}

function row({ span, depth }, total) {
  const attrs = span.Attributes || {};
  const facts = [];
  const seen = new Set();
  for (const [k, f] of FACTS) {
    if (attrs[k] === undefined) continue;
    const text = f(attrs[k]);
    if (seen.has(text)) continue;
    seen.add(text);
    facts.push(h('span', { class: 'span-fact' }, text));
  }
  const bar = h('div', { class: `span-bar ${span.Status === 'error' ? 'error' : ''}` });
  // CSSOM, not a style attribute: the page's CSP allows only its own stylesheet.
  bar.style.left = `${total > 0 ? (span.OffsetMs / total) * 100 : 0}%`;
  bar.style.width = `${total > 0 ? Math.max((span.DurationMs / total) * 100, 0.4) : 100}%`;
  const name = h('span', { class: 'span-name' }, span.Name);
  const label = h('div', { class: 'span-label' }, name, ...facts);
  label.style.paddingLeft = `${depth * 14}px`;
  const content = CONTENT.filter(([k]) => attrs[k] !== undefined)
    .map(([k, title]) => [h('div', { class: 'label' }, title), h('pre', { class: 'span-content' }, pretty(attrs[k]))]);
  const table = h('table', { class: 'span-attrs' },
    h('tbody', {}, Object.keys(attrs).sort().filter((k) => !CONTENT.some(([c]) => c === k))
      .map((k) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, typeof attrs[k] === 'string' ? attrs[k] : JSON.stringify(attrs[k]))))));
  return h('li', { class: 'span-row', dataset: { spanName: span.Name, status: span.Status } },
    h('details', {},
      h('summary', {},
        label,
        h('div', { class: 'span-track', 'aria-hidden': 'true' }, bar),
        h('span', { class: 'span-dur' }, fmtMs(span.DurationMs))),
      h('div', { class: 'span-detail' },
        span.Error ? h('p', { class: 'span-error' }, span.Error) : null,
        h('p', { class: 'muted small' }, `${span.Kind} span · starts at +${fmtMs(span.OffsetMs)} · span ${span.SpanId}`),
        content, table)));
}

/** TraceDialog shows a run's trace in a modal dialog. */
export class TraceDialog {
  constructor() {
    this.title = h('h2', { id: 'trace-title' }, 'Trace');
    this.summary = h('p', { class: 'muted small trace-summary', role: 'status' });
    this.body = h('div', { class: 'trace-body' });
    const close = h('button', { type: 'button', class: 'icon', 'aria-label': 'Close trace', onclick: () => this.el.close() }, svg('close'));
    this.el = h('dialog', { class: 'trace', 'aria-labelledby': 'trace-title' },
      h('div', { class: 'inspector-head' }, this.title, h('span', { class: 'spacer' }), close),
      this.summary, this.body);
    this.el.addEventListener('click', (e) => { if (e.target === this.el) this.el.close(); }); // the backdrop
    document.body.append(this.el);
    this.token = 0;
  }

  /** open shows the trace of a run ({agentId, sessionId, invocationId}). */
  async open({ agentId, sessionId, invocationId }) {
    const token = ++this.token;
    this.title.textContent = 'Trace of this turn';
    this.summary.textContent = 'Loading…';
    clear(this.body);
    if (!this.el.open) this.el.showModal();
    let d;
    try {
      d = await call('GetRunTrace', { AgentId: agentId, SessionId: sessionId, InvocationId: invocationId });
    } catch (e) {
      if (token !== this.token) return;
      this.summary.textContent = '';
      this.body.append(h('p', { class: 'trace-error', role: 'alert' }, e.message || String(e)));
      return;
    }
    if (token !== this.token) return;
    const spans = d.Spans || [];
    this.summary.textContent = `${spans.length} spans · ${fmtMs(d.DurationMs)} · trace ${(d.TraceIds || []).join(', ')}`;
    const scale = h('div', { class: 'span-scale', 'aria-hidden': 'true' },
      h('span', {}, '0'), h('span', {}, fmtMs(d.DurationMs / 2)), h('span', {}, fmtMs(d.DurationMs)));
    this.body.append(h('div', { class: 'span-head' }, h('span', {}, 'Span'), scale, h('span', {}, 'Duration')),
      h('ul', { class: 'waterfall', 'aria-label': 'Spans' }, order(spans).map((r) => row(r, d.DurationMs))));
  }
}
