// The workspace panel: the agent's workspace files (ListWorkspaceFiles), upload
// (AddWorkspaceFile), delete (DeleteWorkspaceFile), preview (GetWorkspaceFileContent) and
// a zip of everything (ExportWorkspaceZip). Text is shown with textContent (never parsed
// as HTML); HTML files only ever render inside <iframe sandbox="allow-scripts">, and the
// server also serves them with a sandboxing CSP (opaque origin).
import { ApiError, PREFIX, call } from './api.js';
import { h, clear } from './dom.js';
import { svg } from './icons.js';

const TEXT_EXT = /\.(txt|md|markdown|json|jsonl|ndjson|csv|tsv|ya?ml|toml|ini|cfg|conf|log|xml|py|js|mjs|ts|go|rs|java|c|h|cpp|sh|sql|css)$/i;
const IMAGE_EXT = /\.(png|jpe?g|gif|webp|bmp|ico|avif)$/i;
const HTML_EXT = /\.html?$/i;
const MAX_TEXT = 512 * 1024; // preview at most this many bytes of text

/** previewKind says how a workspace entry is previewed: 'html', 'image', 'text' or ''. */
export function previewKind(entry) {
  const mime = (entry.MimeType || '').toLowerCase().split(';')[0].trim();
  const name = entry.Name || entry.Path || '';
  if (mime === 'text/html' || mime === 'application/xhtml+xml' || HTML_EXT.test(name)) return 'html';
  if (mime === 'image/svg+xml' || /\.svg$/i.test(name)) return 'image'; // <img> never runs SVG scripts
  if (mime.startsWith('image/') || IMAGE_EXT.test(name)) return 'image';
  if (mime.startsWith('text/') || mime === 'application/json' || mime.endsWith('+json') ||
      mime === 'application/xml' || mime.endsWith('+xml') || mime === 'application/x-ndjson' ||
      mime === 'application/yaml' || mime === 'application/toml' || TEXT_EXT.test(name)) return 'text';
  return '';
}

export function formatSize(n) {
  if (n === null || n === undefined) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export class Workspace {
  /**
   * panel: the <aside>; els: {list, preview, file, refresh, zip, root, status};
   * agentId(): the current agent; onError(e) shows an error.
   */
  constructor(panel, els, { agentId, onError }) {
    Object.assign(this, { panel, els, agentId, onError, entries: [], selected: '', token: 0 });
    els.refresh.addEventListener('click', () => this.load());
    els.file.addEventListener('change', (e) => this.onFiles(e));
  }

  get open() { return !this.panel.hidden; }

  contentUrl(path) {
    const q = new URLSearchParams({ FilePath: path });
    if (this.agentId()) q.set('AgentId', this.agentId());
    return `${PREFIX}GetWorkspaceFileContent?${q}`;
  }

  zipUrl() {
    const q = new URLSearchParams({ Path: '.' });
    if (this.agentId()) q.set('AgentId', this.agentId());
    return `${PREFIX}ExportWorkspaceZip?${q}`;
  }

  async load() {
    if (!this.open) return;
    const token = ++this.token;
    this.els.zip.href = this.zipUrl();
    try {
      const data = await call('ListWorkspaceFiles', { AgentId: this.agentId(), Path: '.', Recursive: true });
      if (token !== this.token) return;
      this.entries = data.Entries || [];
      this.els.root.textContent = data.Root ? `Root: ${data.Root}${data.Truncated ? ' (list truncated)' : ''}` : '';
      this.render();
      if (this.selected && !this.entries.some((e) => e.Path === this.selected)) this.closePreview();
    } catch (e) {
      if (token === this.token) this.onError(e);
    }
  }

  render() {
    const ul = this.els.list;
    clear(ul);
    if (!this.entries.length) {
      ul.append(h('li', { class: 'empty' }, 'No files in the workspace'));
      return;
    }
    const sorted = this.entries.slice().sort((a, b) => a.Path.localeCompare(b.Path));
    for (const e of sorted) ul.append(this.item(e));
  }

  item(e) {
    const depth = (e.Path.match(/\//g) || []).length;
    const isDir = e.Type === 'directory';
    const li = h('li', { class: `ws-entry depth-${Math.min(depth, 6)}${e.Path === this.selected ? ' active' : ''}`, dataset: { path: e.Path, type: e.Type } });
    if (isDir) {
      li.append(h('span', { class: 'ws-name dir', title: e.Path }, svg('folder'), ' ', e.Name, '/'),
        h('button', { type: 'button', class: 'icon', 'aria-label': `Delete folder ${e.Path}`, title: 'Delete folder', onclick: () => this.remove(e) }, svg('trash')));
      return li;
    }
    li.append(
      h('button', { type: 'button', class: 'ws-open', title: e.Path, 'aria-label': `Preview ${e.Path}`,
        'aria-current': e.Path === this.selected ? 'true' : 'false', onclick: () => this.preview(e) },
      svg('file'), ' ', h('span', { class: 'ws-name' }, e.Name)),
      h('span', { class: 'ws-size muted small' }, formatSize(e.SizeBytes)),
      h('a', { class: 'icon', href: this.contentUrl(e.Path), download: e.Name, 'aria-label': `Download ${e.Path}`, title: 'Download' }, svg('download')),
      h('button', { type: 'button', class: 'icon', 'aria-label': `Delete ${e.Path}`, title: 'Delete', onclick: () => this.remove(e) }, svg('trash')));
    return li;
  }

  async onFiles(ev) {
    const files = [...ev.target.files];
    ev.target.value = '';
    const status = this.els.status;
    for (const f of files) {
      status.textContent = `Uploading ${f.name}…`;
      try {
        const form = new FormData();
        form.append('file', f, f.name);
        form.append('Path', f.name);
        if (this.agentId()) form.append('AgentId', this.agentId());
        const res = await fetch(`${PREFIX}AddWorkspaceFile`, { method: 'POST', body: form });
        let body = null;
        try { body = await res.json(); } catch { /* not JSON */ }
        if (!res.ok || !body || (body.Code !== 0 && body.Code !== '0')) {
          throw new ApiError(body?.Message || `AddWorkspaceFile failed (HTTP ${res.status})`, { status: res.status, code: body?.Code, action: 'AddWorkspaceFile' });
        }
        status.textContent = `Uploaded ${f.name}`;
      } catch (e) {
        status.textContent = '';
        this.onError(e);
      }
    }
    await this.load();
  }

  async remove(e) {
    const what = e.Type === 'directory' ? `the folder ${e.Path} and everything in it` : e.Path;
    if (!window.confirm(`Delete ${what} from the workspace?`)) return;
    try {
      await call('DeleteWorkspaceFile', { AgentId: this.agentId(), Path: e.Path });
      this.els.status.textContent = `Deleted ${e.Path}`;
      if (this.selected === e.Path || this.selected.startsWith(`${e.Path}/`)) this.closePreview();
    } catch (err) {
      this.onError(err);
    }
    await this.load();
  }

  closePreview() {
    this.selected = '';
    clear(this.els.preview);
    this.els.preview.hidden = true;
    for (const li of this.els.list.children) {
      li.classList.remove('active');
      li.querySelector('.ws-open')?.setAttribute('aria-current', 'false');
    }
  }

  async preview(e) {
    this.selected = e.Path;
    for (const li of this.els.list.children) {
      const on = li.dataset.path === e.Path;
      li.classList.toggle('active', on);
      li.querySelector('.ws-open')?.setAttribute('aria-current', on ? 'true' : 'false');
    }
    const box = this.els.preview;
    clear(box);
    box.hidden = false;
    const url = this.contentUrl(e.Path);
    const head = h('div', { class: 'ws-preview-head' },
      h('h3', {}, e.Path),
      h('button', { type: 'button', class: 'icon small', 'aria-label': 'Close preview', onclick: () => this.closePreview() }, svg('close')));
    box.append(head);
    const kind = previewKind(e);
    if (kind === 'image') {
      box.append(h('img', { class: 'ws-image', src: url, alt: `Preview of ${e.Name}` }));
    } else if (kind === 'html') {
      // allow-scripts without allow-same-origin: the page runs in an opaque origin.
      box.append(h('iframe', { class: 'ws-frame', src: url, sandbox: 'allow-scripts', referrerpolicy: 'no-referrer', title: `Preview of ${e.Name}` }));
    } else if (kind === 'text') {
      const pre = h('pre', { class: 'ws-text', tabindex: '0', 'aria-label': `Contents of ${e.Name}` }, 'Loading…');
      box.append(pre);
      try {
        const res = await fetch(url);
        if (!res.ok) throw new ApiError(`Could not read ${e.Path} (HTTP ${res.status})`, { status: res.status, action: 'GetWorkspaceFileContent' });
        const buf = await res.arrayBuffer();
        if (this.selected !== e.Path || !pre.isConnected) return; // another file was opened meanwhile
        let text = new TextDecoder().decode(buf.slice(0, MAX_TEXT));
        if ((e.MimeType || '').includes('json') || /\.json$/i.test(e.Name)) {
          try { text = JSON.stringify(JSON.parse(text), null, 2); } catch { /* show as is */ }
        }
        pre.textContent = text; // never parsed as HTML
        if (buf.byteLength > MAX_TEXT) box.append(h('p', { class: 'muted small' }, `Showing the first ${formatSize(MAX_TEXT)}.`));
      } catch (err) {
        pre.textContent = '';
        this.onError(err);
      }
    } else {
      box.append(h('p', { class: 'muted' }, `No preview for ${e.MimeType || 'this file type'}. `,
        h('a', { href: url, download: e.Name }, `Download ${e.Name}`)));
    }
  }
}
