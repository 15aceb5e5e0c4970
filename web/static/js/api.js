// The Web UI action API: POST /agentengine/api/v1/<Action> answered in the envelope
// {Code, Message, RequestId, Action, Data}; RunAgent streams and SubscribeRunEvents are SSE.

export const PREFIX = '/agentengine/api/v1/';

/** ApiError carries the envelope's human Message (shown to the user). */
export class ApiError extends Error {
  constructor(message, { status = 0, code = '', action = '', requestId = '' } = {}) {
    super(message);
    this.name = 'ApiError';
    Object.assign(this, { status, code, action, requestId });
  }
}

async function envelope(res, action) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  if (!res.ok || !body || (body.Code !== 0 && body.Code !== '0')) {
    const msg = body?.Message || body?.detail || `${action} failed (HTTP ${res.status})`;
    throw new ApiError(msg, { status: res.status, code: body?.Code, action, requestId: body?.RequestId });
  }
  return body.Data;
}

/** call posts an action and returns its Data, or throws ApiError. */
export async function call(action, body = {}, { signal } = {}) {
  const res = await fetch(PREFIX + action, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  return envelope(res, action);
}

/** upload sends one file as multipart field "file"; returns FileData. */
export async function upload(file) {
  const form = new FormData();
  form.append('file', file, file.name);
  const res = await fetch(PREFIX + 'UploadFile', { method: 'POST', body: form });
  const data = await envelope(res, 'UploadFile');
  return data.FileData;
}

/**
 * readSSE reads an event stream from a fetch Response, calling onFrame({event, data, id})
 * for each frame (comments are skipped). Resolves when the stream ends.
 */
export async function readSSE(res, onFrame) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let frame = { event: '', data: [], id: null };
  const dispatch = () => {
    if (frame.data.length) onFrame({ event: frame.event || 'message', data: frame.data.join('\n'), id: frame.id });
    frame = { event: '', data: [], id: null };
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.search(/\r?\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' ? 2 : 1));
      if (line === '') { dispatch(); continue; }
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') frame.event = value;
      else if (field === 'data') frame.data.push(value);
      else if (field === 'id') frame.id = value;
    }
  }
  dispatch();
}

/** stream posts an action whose answer is SSE (RunAgent with Stream:true). */
export async function stream(action, body, onFrame, { signal } = {}) {
  const res = await fetch(PREFIX + action, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok || !(res.headers.get('Content-Type') || '').includes('text/event-stream')) {
    await envelope(res, action); // throws with the envelope's Message
    throw new ApiError(`${action}: expected an event stream`, { status: res.status, action });
  }
  await readSSE(res, onFrame);
}

/** subscribe follows a run with GET SubscribeRunEvents (stored events after afterSeqId, then live snapshots). */
export async function subscribe({ sessionId, invocationId, agentId, afterSeqId = 0 }, onFrame, { signal } = {}) {
  const q = new URLSearchParams({ SessionId: sessionId, InvocationId: invocationId, AfterSeqId: String(afterSeqId) });
  if (agentId) q.set('AgentId', agentId);
  const res = await fetch(`${PREFIX}SubscribeRunEvents?${q}`, { headers: { Accept: 'text/event-stream' }, signal });
  if (!res.ok) await envelope(res, 'SubscribeRunEvents');
  await readSSE(res, onFrame);
}

/** newId makes a client-side invocation id (KsADK's web client chooses its own too). */
export function newId(prefix = 'inv') {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return `${prefix}_${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}
