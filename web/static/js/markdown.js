// A tiny, safe Markdown renderer. Everything is HTML-escaped first; only the markup this
// file itself produces is ever HTML. Supports code fences, inline code, headings, bold,
// italic, links (http, https, mailto and relative only; rel="noopener noreferrer"),
// ordered and unordered lists, block quotes and paragraphs.

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** escapeHtml makes any text safe to put in HTML text or a quoted attribute. */
export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
}

const SAFE_URL = /^(https?:\/\/|mailto:|\/(?!\/)|#|\.\.?\/)/i;

function inline(text) {
  // text is raw; escape it, protecting inline code spans first.
  const codes = [];
  let s = text.replace(/`([^`\n]+)`/g, (_, c) => {
    codes.push(`<code>${escapeHtml(c)}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  s = escapeHtml(s);
  s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (m, label, url) => {
    const raw = url.replace(/&amp;/g, '&');
    if (!SAFE_URL.test(raw)) return label;
    return `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`;
  });
  s = s.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/__([^_\n]+)__/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
}

const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+(.*)$/;

function blocks(text) {
  const out = [];
  const lines = text.split('\n');
  let para = [];
  const flush = () => {
    if (para.length) out.push(`<p>${para.map(inline).join('<br>')}</p>`);
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) { flush(); continue; }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) { flush(); const n = Math.min(h[1].length + 2, 6); out.push(`<h${n}>${inline(h[2])}</h${n}>`); continue; }
    if (/^>\s?/.test(line)) {
      flush();
      const q = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) q.push(lines[i++].replace(/^>\s?/, ''));
      i--;
      out.push(`<blockquote>${blocks(q.join('\n'))}</blockquote>`);
      continue;
    }
    const li = LIST_ITEM.exec(line);
    if (li) {
      flush();
      const ordered = /\d/.test(li[1]);
      const items = [];
      while (i < lines.length) {
        const m = LIST_ITEM.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        items.push(`<li>${inline(m[2])}</li>`);
        i++;
      }
      i--;
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${items.join('')}</${tag}>`);
      continue;
    }
    para.push(line);
  }
  flush();
  return out.join('');
}

/** renderMarkdown turns untrusted Markdown into safe HTML. */
export function renderMarkdown(src) {
  const text = String(src ?? '').replace(/\r\n?/g, '\n');
  const parts = [];
  const fence = /^```([\w+-]*)[^\n]*\n([\s\S]*?)(?:^```[ \t]*$|(?![\s\S]))/gm;
  let last = 0;
  let m;
  while ((m = fence.exec(text)) !== null) {
    parts.push(blocks(text.slice(last, m.index)));
    const lang = m[1] ? ` class="language-${escapeHtml(m[1])}"` : '';
    parts.push(`<pre><code${lang}>${escapeHtml(m[2].replace(/\n$/, ''))}</code></pre>`);
    last = fence.lastIndex;
    if (m[0].length === 0) fence.lastIndex++;
  }
  parts.push(blocks(text.slice(last)));
  return parts.join('');
}
