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
