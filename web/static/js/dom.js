// Small DOM helpers: elements are built with properties and text nodes, never from
// untrusted HTML strings.

/**
 * h('button', {class: 'x', onclick: fn, 'aria-label': 'Close'}, 'text', child)
 * Keys starting with "on" are listeners; "class", "text", "dataset" and other keys set
 * attributes (or properties when the element has them, e.g. value, checked).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** clear removes every child of el. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** pretty formats a JSON-able value (or a JSON string) for display. */
export function pretty(v) {
  if (typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  try { return JSON.stringify(v, null, 2); } catch { return String(v); }
}

/** copyText puts text on the clipboard (the Clipboard API, else a hidden textarea). */
export async function copyText(text) {
  if (navigator.clipboard?.writeText) {
    try { await navigator.clipboard.writeText(text); return; } catch { /* fall back */ }
  }
  const ta = h('textarea', { class: 'sr-only', readonly: true });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  const ok = document.execCommand('copy');
  ta.remove();
  if (!ok) throw new Error('Copying to the clipboard is not allowed here');
}

const SVG = 'http://www.w3.org/2000/svg';

/** icon builds a small line icon from SVG path data (no font glyph needed). */
export function icon(paths) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [k, v] of Object.entries({ viewBox: '0 0 24 24', width: '15', height: '15', fill: 'none', stroke: 'currentColor',
    'stroke-width': '2', 'stroke-linecap': 'round', 'stroke-linejoin': 'round', 'aria-hidden': 'true', class: 'svg-icon' })) svg.setAttribute(k, v);
  for (const d of paths) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', d);
    svg.append(p);
  }
  return svg;
}

const COPY_ICON = ['M9 9h10v10H9z', 'M5 15H4V4h11v1'];
const DONE_ICON = ['M5 12l5 5L20 7'];

/** copyButton is a button that copies getText() and says so for a moment. */
export function copyButton(label, getText, { className = 'icon copy' } = {}) {
  const btn = h('button', { type: 'button', class: className, 'aria-label': label, title: label }, icon(COPY_ICON));
  let timer = 0;
  btn.addEventListener('click', async () => {
    clearTimeout(timer);
    try {
      await copyText(getText());
      btn.replaceChildren(icon(DONE_ICON));
      btn.dataset.copied = 'true';
      btn.setAttribute('aria-label', 'Copied');
    } catch {
      btn.dataset.copied = 'failed';
    }
    timer = setTimeout(() => { btn.replaceChildren(icon(COPY_ICON)); btn.setAttribute('aria-label', label); delete btn.dataset.copied; }, 1500);
  });
  return btn;
}
