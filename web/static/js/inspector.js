// The event inspector: raw stored events of the session (ListSessionEvents).
import { call } from './api.js';
import { h, clear, pretty } from './dom.js';

export class Inspector {
  constructor(panel, list, { onError }) {
    Object.assign(this, { panel, list, onError });
  }

  get open() { return !this.panel.hidden; }

  async load(sessionId, agentId) {
    if (!this.open) return;
    clear(this.list);
    if (!sessionId) { this.list.append(h('li', { class: 'empty' }, 'No session selected')); return; }
    try {
      const data = await call('ListSessionEvents', { SessionId: sessionId, AgentId: agentId, Limit: 500 });
      const events = data.Events || [];
      if (!events.length) this.list.append(h('li', { class: 'empty' }, 'No events'));
      for (const ev of events) {
        this.list.append(h('li', {},
          h('details', { class: 'event' },
            h('summary', {}, h('span', { class: 'seq' }, `#${ev.SeqId}`), ' ', h('strong', {}, ev.EventType), ' ',
              h('span', { class: 'muted' }, ev.Author || ''), ' ', h('span', { class: 'muted' }, ev.InvocationId || '')),
            h('pre', {}, pretty(ev)))));
      }
    } catch (e) {
      this.onError(e);
    }
  }
}
