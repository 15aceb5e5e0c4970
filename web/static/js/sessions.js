// The session sidebar: list (ListSessions), client-side search, select, rename, delete.
import { h, clear } from './dom.js';
import { svg } from './icons.js';

export function sessionTitle(s) {
  return s.Title || s.FirstPrompt || 'New chat';
}

// The chip of a session's latest run (none for a completed one).
const RUN_CHIPS = {
  in_progress: ['Running', 'running'],
  interrupted: ['Needs approval', 'warn'],
  failed: ['Failed', 'error'],
  error: ['Failed', 'error'],
  cancelled: ['Stopped', 'muted'],
  canceled: ['Stopped', 'muted'],
};

/** runChip renders the status chip of a session's latest run, or null. */
export function runChip(status) {
  const c = RUN_CHIPS[status];
  return c ? h('span', { class: `run-chip ${c[1]}`, dataset: { status } }, c[0]) : null;
}

/** when formats an epoch-seconds time for the list: time today, weekday this week, else a date. */
export function when(epochSeconds, now = new Date()) {
  if (!epochSeconds) return '';
  const d = new Date(epochSeconds * 1000);
  const mins = (now - d) / 60000;
  if (mins < 1) return 'just now';
  if (mins < 60) return `${Math.floor(mins)} min ago`;
  const sameDay = d.toDateString() === now.toDateString();
  if (sameDay) return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (mins < 7 * 24 * 60) return d.toLocaleDateString([], { weekday: 'short' }) + ' ' + d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toLocaleDateString([], { year: d.getFullYear() === now.getFullYear() ? undefined : 'numeric', month: 'short', day: 'numeric' });
}

/** SessionList renders sessions into ul; callbacks: onSelect(id), onRename(id, title), onDelete(id). */
export class SessionList {
  constructor(ul, search, { onSelect, onRename, onDelete }) {
    Object.assign(this, { ul, search, onSelect, onRename, onDelete, sessions: [], current: '' });
    search.addEventListener('input', () => this.render());
  }

  set(sessions, current = this.current) {
    this.sessions = sessions;
    this.current = current;
    this.render();
  }

  select(id) {
    this.current = id;
    for (const li of this.ul.children) {
      const on = li.dataset.sessionId === id;
      li.classList.toggle('active', on);
      li.querySelector('.session-open')?.setAttribute('aria-current', on ? 'true' : 'false');
    }
  }

  render() {
    const q = this.search.value.trim().toLowerCase();
    clear(this.ul);
    const shown = this.sessions.filter((s) => !q ||
      [sessionTitle(s), s.FirstPrompt, s.LastPrompt].some((t) => (t || '').toLowerCase().includes(q)));
    if (!shown.length) {
      this.ul.append(h('li', { class: 'empty' }, q ? 'No matching chats' : 'No chats yet'));
      return;
    }
    for (const s of shown) this.ul.append(this.item(s));
  }

  item(s) {
    const title = sessionTitle(s);
    const at = s.UpdatedAt || s.CreatedAt;
    const time = at ? h('time', { class: 'session-time', datetime: new Date(at * 1000).toISOString(), title: new Date(at * 1000).toLocaleString() }, when(at)) : null;
    const open = h('button', { type: 'button', class: 'session-open', 'aria-current': s.SessionId === this.current ? 'true' : 'false',
      title: s.LastPrompt || title, onclick: () => this.onSelect(s.SessionId) },
    h('span', { class: 'session-title' }, title),
    h('span', { class: 'session-meta' }, time, runChip(s.ActiveRunStatus)));
    const rename = h('button', { type: 'button', class: 'icon', 'aria-label': `Rename chat ${title}`, onclick: () => this.edit(li, s) }, svg('edit'));
    const del = h('button', { type: 'button', class: 'icon', 'aria-label': `Delete chat ${title}`, onclick: () => {
      if (window.confirm(`Delete the chat "${title}"?`)) this.onDelete(s.SessionId);
    } }, svg('trash'));
    const li = h('li', { class: s.SessionId === this.current ? 'active' : '', dataset: { sessionId: s.SessionId } }, open, rename, del);
    return li;
  }

  edit(li, s) {
    const input = h('input', { type: 'text', value: sessionTitle(s), 'aria-label': 'New chat title', maxlength: '200' });
    const form = h('form', { class: 'rename-form' }, input,
      h('button', { type: 'submit', class: 'small' }, 'Save'),
      h('button', { type: 'button', class: 'small', onclick: () => this.render() }, 'Cancel'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const t = input.value.trim();
      if (t) await this.onRename(s.SessionId, t);
      this.render();
    });
    input.addEventListener('keydown', (e) => { if (e.key === 'Escape') this.render(); });
    clear(li);
    li.append(form);
    input.focus();
    input.select();
  }
}
