// Checks a Responses event stream against the order and field rules that real clients (the
// OpenAI SDKs' stream helpers) rely on. Every failure names the event.
import assert from 'node:assert/strict';

export const LIFECYCLE = new Set([
  'response.created', 'response.queued', 'response.in_progress',
  'response.completed', 'response.failed', 'response.incomplete',
]);
export const TERMINAL = { 'response.completed': 'completed', 'response.failed': 'failed', 'response.incomplete': 'incomplete' };

// Standard event types a server of this kind may emit. Anything else breaks the openai-node
// stream helper ("Unhandled response stream event").
export const STANDARD_EVENTS = new Set([
  ...LIFECYCLE,
  'response.output_item.added', 'response.output_item.done',
  'response.content_part.added', 'response.content_part.done',
  'response.output_text.delta', 'response.output_text.done', 'response.output_text.annotation.added',
  'response.refusal.delta', 'response.refusal.done',
  'response.function_call_arguments.delta', 'response.function_call_arguments.done',
  'response.reasoning_text.delta', 'response.reasoning_text.done',
  'response.reasoning_summary_part.added', 'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done',
  'response.mcp_call_arguments.delta', 'response.mcp_call_arguments.done',
  'response.mcp_call.in_progress', 'response.mcp_call.completed', 'response.mcp_call.failed',
  'response.mcp_list_tools.in_progress', 'response.mcp_list_tools.completed', 'response.mcp_list_tools.failed',
  'error',
]);

const ITEM_EVENT_TYPE = {
  'response.output_text.delta': 'message',
  'response.output_text.done': 'message',
  'response.output_text.annotation.added': 'message',
  'response.refusal.delta': 'message',
  'response.refusal.done': 'message',
  'response.function_call_arguments.delta': 'function_call',
  'response.function_call_arguments.done': 'function_call',
  'response.reasoning_text.delta': 'reasoning',
  'response.reasoning_text.done': 'reasoning',
  'response.reasoning_summary_part.added': 'reasoning',
  'response.reasoning_summary_part.done': 'reasoning',
  'response.reasoning_summary_text.delta': 'reasoning',
  'response.reasoning_summary_text.done': 'reasoning',
  'response.mcp_call_arguments.delta': 'mcp_call',
  'response.mcp_call_arguments.done': 'mcp_call',
};

const USAGE_KEYS = ['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'];

export function checkUsage(usage, where) {
  assert.ok(usage && typeof usage === 'object', `${where}: usage missing (got ${JSON.stringify(usage)})`);
  for (const k of USAGE_KEYS) assert.ok(k in usage, `${where}: usage.${k} missing in ${JSON.stringify(usage)}`);
  for (const k of ['input_tokens', 'output_tokens', 'total_tokens']) {
    assert.ok(Number.isInteger(usage[k]) && usage[k] >= 0, `${where}: usage.${k} = ${JSON.stringify(usage[k])}, want a non-negative integer`);
  }
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens, `${where}: usage.total_tokens != input+output`);
  assert.ok(Number.isInteger(usage.input_tokens_details?.cached_tokens), `${where}: usage.input_tokens_details.cached_tokens missing`);
  assert.ok(Number.isInteger(usage.input_tokens_details?.cache_write_tokens), `${where}: usage.input_tokens_details.cache_write_tokens missing (spec-required; openai-python strict validation rejects its absence)`);
  assert.ok(Number.isInteger(usage.output_tokens_details?.reasoning_tokens), `${where}: usage.output_tokens_details.reasoning_tokens missing`);
}

/** Checks the top-level shape of a Response object (non-stream body or lifecycle event payload). */
export function checkResponseObject(r, where, { model } = {}) {
  assert.ok(r && typeof r === 'object', `${where}: response missing`);
  assert.equal(r.object, 'response', `${where}: response.object`);
  assert.ok(typeof r.id === 'string' && r.id.startsWith('resp_'), `${where}: response.id = ${JSON.stringify(r.id)}, want "resp_…"`);
  assert.ok(Number.isInteger(r.created_at), `${where}: response.created_at = ${JSON.stringify(r.created_at)}, want integer unix seconds`);
  assert.ok(Math.abs(r.created_at - Date.now() / 1000) < 3600, `${where}: response.created_at ${r.created_at} is not near now (seconds, not ms?)`);
  if (model) assert.equal(r.model, model, `${where}: response.model`);
  assert.ok(Array.isArray(r.output), `${where}: response.output is not an array`);
  assert.ok(Array.isArray(r.tools), `${where}: response.tools is not an array`);
  assert.ok('tool_choice' in r, `${where}: response.tool_choice missing`);
  assert.equal(typeof r.parallel_tool_calls, 'boolean', `${where}: response.parallel_tool_calls`);
  assert.ok(typeof r.status === 'string', `${where}: response.status missing`);
}

/**
 * Validate a full event list. Returns {terminal, response, items} where items are the
 * output_item.done items in order.
 */
export function checkResponseStream(events, { model } = {}) {
  const where = (i) => `event #${i} (${events[i]?.type})`;
  assert.ok(events.length >= 3, `stream too short: ${events.map((e) => e.type).join(', ')}`);
  assert.equal(events[0].type, 'response.created', 'first event must be response.created');
  assert.deepEqual(events[0].response.output, [], 'response.created: response.output must be []');

  let responseId = null;
  const added = []; // {item, done, parts:[{text, done}], args}
  let terminalIndex = -1;
  let sawOutput = false;

  events.forEach((e, i) => {
    assert.ok(STANDARD_EVENTS.has(e.type), `${where(i)}: non-standard event type ${JSON.stringify(e.type)} (openai-node's stream helper throws on it)`);
    assert.equal(e.sequence_number, i, `${where(i)}: sequence_number = ${e.sequence_number}, want ${i} (0..n, +1 per event)`);
    if (e.type !== 'error') {
      assert.ok(!('error' in e), `${where(i)}: top-level "error" key on a normal event (openai-go treats it as a stream error)`);
    }
    assert.ok(terminalIndex < 0, `${where(i)}: event after the terminal ${events[terminalIndex]?.type}`);

    if (LIFECYCLE.has(e.type)) {
      checkResponseObject(e.response, where(i), { model });
      if (responseId === null) responseId = e.response.id;
      assert.equal(e.response.id, responseId, `${where(i)}: response.id changed`);
      if (e.type === 'response.in_progress') {
        assert.ok(!sawOutput, `${where(i)}: response.in_progress after output started (openai-node replaces its snapshot)`);
        assert.equal(e.response.status, 'in_progress', `${where(i)}: status`);
      }
      if (e.type === 'response.created') assert.ok(['in_progress', 'queued'].includes(e.response.status), `${where(i)}: status ${e.response.status}`);
      if (TERMINAL[e.type]) {
        terminalIndex = i;
        assert.equal(e.response.status, TERMINAL[e.type], `${where(i)}: response.status`);
      }
      return;
    }

    if (e.type === 'error') {
      assert.equal(typeof e.message, 'string', `${where(i)}: error event needs a flat "message" (spec ResponseErrorEvent)`);
      assert.ok('code' in e && 'param' in e, `${where(i)}: error event needs flat "code" and "param" (nullable)`);
      return;
    }

    assert.ok(responseId !== null, `${where(i)}: output event before response.created`);
    const oi = e.output_index;
    assert.ok(Number.isInteger(oi), `${where(i)}: output_index = ${JSON.stringify(oi)}`);

    if (e.type === 'response.output_item.added') {
      sawOutput = true;
      assert.equal(oi, added.length, `${where(i)}: output_index must append (want ${added.length})`);
      const it = e.item;
      assert.ok(typeof it?.id === 'string' && it.id.length > 0, `${where(i)}: item.id must be a non-empty string`);
      assert.ok(!added.some((a) => a.item.id === it.id), `${where(i)}: duplicate item id ${it.id}`);
      if (it.type === 'message') {
        assert.equal(it.role, 'assistant', `${where(i)}: message.role`);
        assert.deepEqual(it.content, [], `${where(i)}: added message must have content []`);
        assert.equal(it.status, 'in_progress', `${where(i)}: added message status`);
      } else if (it.type === 'function_call') {
        assert.ok(typeof it.call_id === 'string' && it.call_id.length > 0, `${where(i)}: function_call.call_id`);
        assert.ok(typeof it.name === 'string' && it.name.length > 0, `${where(i)}: function_call.name`);
        assert.equal(typeof it.arguments, 'string', `${where(i)}: function_call.arguments must be a string ("" while streaming)`);
        assert.ok(['in_progress', 'completed'].includes(it.status), `${where(i)}: function_call.status = ${it.status}`);
        assert.ok(!added.some((a) => a.item.call_id && a.item.call_id === it.call_id), `${where(i)}: duplicate call_id`);
      } else if (it.type === 'mcp_call') {
        assert.equal(it.arguments, '', `${where(i)}: added mcp_call.arguments must be "" (deltas append)`);
        assert.ok(typeof it.server_label === 'string' && it.server_label.length > 0, `${where(i)}: mcp_call.server_label`);
        assert.ok(typeof it.name === 'string' && it.name.length > 0, `${where(i)}: mcp_call.name`);
      } else if (it.type === 'reasoning') {
        assert.ok(Array.isArray(it.summary), `${where(i)}: reasoning.summary must be an array`);
      }
      added.push({ item: it, done: null, parts: [], args: '', summary: [], rtext: [] });
      return;
    }

    const slot = added[oi];
    assert.ok(slot, `${where(i)}: output_index ${oi} has no output_item.added`);
    assert.equal(slot.done, null, `${where(i)}: event for item ${slot.item.id} after its output_item.done`);

    if (e.type === 'response.output_item.done') {
      assert.equal(e.item.id, slot.item.id, `${where(i)}: item.id changed`);
      assert.equal(e.item.type, slot.item.type, `${where(i)}: item.type changed`);
      if (slot.item.type === 'message') {
        assert.equal(e.item.status, 'completed', `${where(i)}: message status`);
        assert.ok(slot.parts.every((p) => p.done !== null), `${where(i)}: message done before its content_part.done`);
        assert.equal(e.item.content.length, slot.parts.length, `${where(i)}: content parts in done item`);
        e.item.content.forEach((p, ci) => {
          assert.equal(p.type, 'output_text', `${where(i)}: content[${ci}].type`);
          assert.equal(p.text, slot.parts[ci].text, `${where(i)}: content[${ci}].text != concatenated deltas`);
          assert.ok(Array.isArray(p.annotations), `${where(i)}: content[${ci}].annotations must be an array`);
        });
      } else if (slot.item.type === 'function_call') {
        assert.equal(e.item.call_id, slot.item.call_id, `${where(i)}: call_id changed`);
        assert.equal(e.item.status, 'completed', `${where(i)}: function_call status (the AI SDK drops the call without it)`);
        assert.equal(e.item.arguments, slot.args || e.item.arguments, `${where(i)}: arguments != concatenated deltas`);
        assert.doesNotThrow(() => JSON.parse(e.item.arguments), `${where(i)}: arguments is not JSON: ${e.item.arguments}`);
      } else if (slot.item.type === 'mcp_call') {
        assert.ok(['completed', 'failed', 'incomplete'].includes(e.item.status), `${where(i)}: mcp_call status ${e.item.status}`);
        assert.equal(e.item.arguments, slot.args || e.item.arguments, `${where(i)}: mcp_call arguments != concatenated deltas`);
        if (e.item.status === 'completed') assert.equal(typeof e.item.output, 'string', `${where(i)}: completed mcp_call.output`);
      }
      slot.done = e.item;
      return;
    }

    assert.equal(e.item_id, slot.item.id, `${where(i)}: item_id must be the id of output[${oi}]`);
    const wantType = e.type.startsWith('response.content_part.')
      ? (e.part?.type === 'reasoning_text' ? 'reasoning' : 'message')
      : ITEM_EVENT_TYPE[e.type];
    if (wantType) assert.equal(slot.item.type, wantType, `${where(i)}: targets a ${slot.item.type} item`);

    switch (e.type) {
      case 'response.content_part.added': {
        const list = e.part?.type === 'reasoning_text' ? slot.rtext : slot.parts;
        assert.equal(e.content_index, list.length, `${where(i)}: content_index must append`);
        assert.equal(e.part.text, '', `${where(i)}: added part text must be ""`);
        list.push({ text: '', done: null });
        break;
      }
      case 'response.output_text.delta':
      case 'response.reasoning_text.delta': {
        const list = e.type === 'response.output_text.delta' ? slot.parts : slot.rtext;
        const p = list[e.content_index];
        assert.ok(p, `${where(i)}: delta before content_part.added for content_index ${e.content_index}`);
        assert.equal(p.done, null, `${where(i)}: delta after the part was done`);
        assert.equal(typeof e.delta, 'string', `${where(i)}: delta`);
        if (e.type === 'response.output_text.delta') assert.ok(Array.isArray(e.logprobs), `${where(i)}: logprobs must be an array`);
        p.text += e.delta;
        break;
      }
      case 'response.output_text.done':
      case 'response.reasoning_text.done': {
        const list = e.type === 'response.output_text.done' ? slot.parts : slot.rtext;
        const p = list[e.content_index];
        assert.ok(p, `${where(i)}: done for missing content_index ${e.content_index}`);
        assert.equal(e.text, p.text, `${where(i)}: text != concatenated deltas`);
        break;
      }
      case 'response.content_part.done': {
        const list = e.part?.type === 'reasoning_text' ? slot.rtext : slot.parts;
        const p = list[e.content_index];
        assert.ok(p, `${where(i)}: done for missing content_index ${e.content_index}`);
        assert.equal(e.part.text, p.text, `${where(i)}: part.text != concatenated deltas`);
        p.done = e.part;
        break;
      }
      case 'response.reasoning_summary_part.added':
        assert.equal(e.summary_index, slot.summary.length, `${where(i)}: summary_index must append`);
        slot.summary.push({ text: '' });
        break;
      case 'response.reasoning_summary_text.delta': {
        const p = slot.summary[e.summary_index];
        assert.ok(p, `${where(i)}: summary delta before reasoning_summary_part.added`);
        p.text += e.delta;
        break;
      }
      case 'response.reasoning_summary_text.done':
        assert.equal(e.text, slot.summary[e.summary_index]?.text, `${where(i)}: summary text != deltas`);
        break;
      case 'response.function_call_arguments.delta':
      case 'response.mcp_call_arguments.delta':
        slot.args += e.delta;
        break;
      case 'response.mcp_call_arguments.done':
        assert.equal(e.arguments, slot.args || e.arguments, `${where(i)}: mcp_call arguments != concatenated deltas`);
        slot.args = e.arguments;
        break;
      case 'response.function_call_arguments.done':
        assert.equal(e.arguments, slot.args || e.arguments, `${where(i)}: arguments != concatenated deltas`);
        if ('name' in e) assert.equal(e.name, slot.item.name, `${where(i)}: name`);
        slot.args = e.arguments;
        break;
      default:
        break;
    }
  });

  assert.ok(terminalIndex >= 0, `no terminal event (response.completed/incomplete/failed); last was ${events.at(-1).type}`);
  assert.equal(terminalIndex, events.length - 1, 'terminal event must be last');
  const terminal = events[terminalIndex];
  const final = terminal.response;
  const unfinished = added.filter((a) => a.done === null).map((a) => a.item.id);
  if (terminal.type !== 'response.failed') {
    assert.deepEqual(unfinished, [], `${terminal.type}: items without output_item.done`);
  }
  assert.equal(final.output.length, added.length, `${terminal.type}: response.output has ${final.output.length} items, ${added.length} were added`);
  final.output.forEach((it, k) => {
    assert.equal(it.id, added[k].item.id, `${terminal.type}: output[${k}].id`);
    assert.equal(it.type, added[k].item.type, `${terminal.type}: output[${k}].type`);
    if (added[k].done) assert.deepEqual(it, added[k].done, `${terminal.type}: output[${k}] differs from its output_item.done item`);
  });
  if (terminal.type === 'response.completed') {
    checkUsage(final.usage, 'response.completed');
    assert.equal(final.error ?? null, null, 'response.completed: error must be null');
  }
  if (terminal.type === 'response.failed') {
    assert.ok(final.error && typeof final.error.message === 'string', 'response.failed: response.error.message');
    assert.ok(typeof final.error.code === 'string', 'response.failed: response.error.code');
  }
  return { terminal, response: final, items: added.map((a) => a.done || a.item) };
}
