// Applying streams to an AssistantView: the Responses SSE of RunAgent (Stream:true,
// ApiFormat:"responses") and the frames of SubscribeRunEvents (stored conversation.event
// frames, live assistant_stream_snapshot / reasoning_stream_snapshot frames, [DONE]).

const TERMINAL = new Set(['completed', 'failed', 'error', 'cancelled', 'canceled', 'aborted', 'interrupted', 'incomplete', 'resume_failed']);

export function isTerminal(status) { return TERMINAL.has(status); }

/**
 * responsesHandler returns an onFrame for readSSE that renders a Responses stream into
 * view. result collects {responseId, status, error}. RunAgent streams KsADK's events
 * (event: lines, bare data objects, response.reasoning.delta, response.ksadk.tool_result,
 * response.cancelled); OpenAI's framing (data.type, data.response) is read too.
 */
export function responsesHandler(view, result) {
  return ({ event, data }) => {
    if (data === '[DONE]') return;
    let ev;
    try { ev = JSON.parse(data); } catch { return; }
    const type = ev.type || event;
    const r = ev.response && typeof ev.response === 'object' ? ev.response : ev;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        if (r.id) result.responseId = r.id;
        break;
      case 'response.output_item.added':
      case 'response.output_item.done':
        item(view, ev.item, type.endsWith('.done'));
        break;
      case 'response.reasoning.delta':
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        view.appendReasoning(ev.item_id, ev.delta || '');
        break;
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_text.done':
        if (typeof ev.text === 'string') view.setReasoning(ev.item_id, ev.text);
        break;
      case 'response.output_text.delta':
        // replace: the delta is the turn's whole text so far (KsADK).
        if (ev.replace) view.setText(ev.item_id, ev.delta || '');
        else view.appendText(ev.item_id, ev.delta || '');
        break;
      case 'response.output_text.done':
        if (typeof ev.text === 'string') view.setText(ev.item_id, ev.text);
        break;
      case 'response.function_call_arguments.delta':
        view.appendToolArgs(ev.item_id, ev.delta || '');
        break;
      case 'response.function_call_arguments.done':
        view.setToolArgs(ev.item_id, ev.arguments || '');
        break;
      case 'response.ksadk.tool_result': {
        const b = view.toolByCall(ev.run_id || ev.call_id || '') || view.lastTool(ev.name);
        if (b) { view.setToolResult(b, ev.output ?? ''); view.setToolState(b, ev.is_error ? 'failed' : 'completed'); }
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
      case 'response.cancelled': {
        result.responseId = r.id || result.responseId;
        result.status = r.status || type.slice('response.'.length);
        if (type === 'response.failed') result.error = r.error?.message || 'The run failed';
        for (const it of r.output || []) if (it.type === 'function_call_output') item(view, it, true);
        break;
      }
      case 'error':
        result.status = 'failed';
        result.error = ev.message || ev.error?.message || 'The run failed';
        break;
      default:
        break;
    }
  };
}

function item(view, it, done) {
  if (!it) return;
  switch (it.type) {
    case 'reasoning':
      view.reasoning(it.id);
      if (done && it.summary?.length) view.setReasoning(it.id, it.summary.map((s) => s.text).join('\n'));
      break;
    case 'message':
      view.text(it.id);
      if (done) {
        const t = (it.content || []).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
        if (t) view.setText(it.id, t);
      }
      break;
    case 'function_call':
      view.tool(it.id, { name: it.name, callId: it.call_id, args: it.arguments, status: done ? 'called' : 'running' });
      break;
    case 'function_call_output': {
      const b = view.toolByCall(it.call_id);
      if (b) { view.setToolResult(b, it.output); view.setToolState(b, 'completed'); }
      break;
    }
    case 'mcp_approval_request':
      view.approval(it.id, { name: it.name, args: it.arguments });
      break;
    default:
      break;
  }
}

/**
 * subscriptionHandler returns an onFrame for SubscribeRunEvents frames. state collects
 * {lastSeq, done, status}.
 */
export function subscriptionHandler(view, state) {
  return ({ event, data, id }) => {
    if (data === '[DONE]') { state.done = true; return; }
    let ev;
    try { ev = JSON.parse(data); } catch { return; }
    if (id) state.lastSeq = Math.max(state.lastSeq, Number(id) || 0);
    const text = (ev.Content?.parts || []).map((p) => p.text || '').join('');
    const itemId = ev.Metadata?.item_id || `live:${ev.EventType}`;
    switch (ev.EventType) {
      case 'assistant_stream_snapshot':
        view.setText(itemId, text);
        break;
      case 'reasoning_stream_snapshot':
      case 'reasoning':
        if (text) view.setReasoning(itemId, text);
        break;
      case 'assistant_message':
        if (text) view.setText(itemId, text);
        break;
      case 'run_status': {
        const s = ev.Content?.status || ev.Metadata?.status;
        state.status = s;
        if (isTerminal(s)) state.terminal = true;
        break;
      }
      default:
        break;
    }
    void event;
  };
}
