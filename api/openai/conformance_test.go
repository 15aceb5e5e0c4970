package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// wireEvent is one parsed SSE event.
type wireEvent struct {
	Name string
	Data map[string]any
	Raw  string
}

// parseSSE splits an SSE transcript into events, dropping comments.
func parseSSE(t *testing.T, b []byte) []wireEvent {
	t.Helper()
	var out []wireEvent
	var cur wireEvent
	var data strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				cur.Raw = data.String()
				if cur.Raw != "[DONE]" {
					if err := json.Unmarshal([]byte(cur.Raw), &cur.Data); err != nil {
						t.Fatalf("event data is not JSON: %v\n%s", err, cur.Raw)
					}
				}
				out = append(out, cur)
			}
			cur, data = wireEvent{}, strings.Builder{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if data.Len() > 0 {
				t.Fatalf("multi-line data: %q", line)
			}
			data.WriteString(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int { f, _ := v.(float64); return int(f) }

// checkResponsesStream asserts the conformance rules of openai-wire.md §2.6 and what
// the openai-node, openai-python and AI SDK stream consumers check, and returns the
// terminal event's response.
func checkResponsesStream(t *testing.T, evs []wireEvent) map[string]any {
	t.Helper()
	if len(evs) < 3 {
		t.Fatalf("stream has %d events", len(evs))
	}
	type itemState struct {
		typ, id, callID string
		parts           int
		text            string
	}
	var items []*itemState
	ids := map[string]bool{}
	var respID string
	for i, ev := range evs {
		typ := str(ev.Data["type"])
		if ev.Name != "" && ev.Name != typ {
			t.Errorf("event %d: event name %q but type %q", i, ev.Name, typ)
		}
		if got := num(ev.Data["sequence_number"]); got != i {
			t.Errorf("event %d (%s): sequence_number %d", i, typ, got)
		}
		if _, has := ev.Data["error"]; has && typ != "error" {
			t.Errorf("event %d (%s) has a top-level error key", i, typ)
		}
		if i == 0 && typ != "response.created" || i == 1 && typ != "response.in_progress" {
			t.Fatalf("event %d is %s; want created then in_progress", i, typ)
		}
		item := func() *itemState {
			oi := num(ev.Data["output_index"])
			if oi < 0 || oi >= len(items) {
				t.Fatalf("event %d (%s): output_index %d of %d items", i, typ, oi, len(items))
			}
			it := items[oi]
			if id, ok := ev.Data["item_id"]; ok && str(id) != it.id {
				t.Errorf("event %d (%s): item_id %v, item is %s", i, typ, id, it.id)
			}
			return it
		}
		switch typ {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			r, _ := ev.Data["response"].(map[string]any)
			if r == nil || str(r["object"]) != "response" {
				t.Fatalf("event %d (%s): no response object", i, typ)
			}
			if respID == "" {
				respID = str(r["id"])
			} else if str(r["id"]) != respID {
				t.Errorf("event %d: response id changed", i)
			}
			if typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed" {
				if i != len(evs)-1 {
					t.Fatalf("terminal %s at %d of %d events", typ, i, len(evs))
				}
				out, _ := r["output"].([]any)
				if len(out) != len(items) {
					t.Fatalf("terminal output has %d items, %d were added", len(out), len(items))
				}
				for k, o := range out {
					if str(o.(map[string]any)["id"]) != items[k].id {
						t.Errorf("terminal output[%d] id differs from the added item", k)
					}
				}
				u, _ := r["usage"].(map[string]any)
				for _, k := range []string{"input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"} {
					if _, ok := u[k]; !ok {
						t.Errorf("terminal usage lacks %s", k)
					}
				}
				if typ == "response.failed" && (i == 0 || str(evs[i-1].Data["type"]) != "error") {
					t.Errorf("response.failed not preceded by an error event")
				}
				return r
			}
		case "response.output_item.added":
			it, _ := ev.Data["item"].(map[string]any)
			if num(ev.Data["output_index"]) != len(items) {
				t.Fatalf("event %d: output_index %d, want %d", i, num(ev.Data["output_index"]), len(items))
			}
			st := &itemState{typ: str(it["type"]), id: str(it["id"]), callID: str(it["call_id"])}
			if st.id == "" || ids[st.id] {
				t.Fatalf("event %d: item id %q empty or duplicate", i, st.id)
			}
			ids[st.id] = true
			switch st.typ {
			case "message":
				if c, ok := it["content"].([]any); !ok || len(c) != 0 {
					t.Errorf("event %d: added message content %v", i, it["content"])
				}
			case "function_call":
				if st.callID == "" || it["arguments"] != "" || it["status"] != "in_progress" {
					t.Errorf("event %d: added function_call skeleton %v", i, it)
				}
			case "mcp_call":
				if it["arguments"] != "" || it["status"] != "in_progress" || str(it["server_label"]) == "" || str(it["name"]) == "" {
					t.Errorf("event %d: added mcp_call skeleton %v", i, it)
				}
			case "reasoning":
				if s, ok := it["summary"].([]any); !ok || len(s) != 0 {
					t.Errorf("event %d: added reasoning summary %v", i, it["summary"])
				}
			}
			items = append(items, st)
		case "response.content_part.added":
			it := item()
			if it.typ != "message" || num(ev.Data["content_index"]) != it.parts {
				t.Errorf("event %d: content_part.added on %s index %v", i, it.typ, ev.Data["content_index"])
			}
			it.parts++
		case "response.reasoning_summary_part.added":
			if it := item(); it.typ != "reasoning" {
				t.Errorf("event %d: summary part on %s", i, it.typ)
			}
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta", "response.mcp_call_arguments.delta":
			it := item()
			want := map[string]string{"response.output_text.delta": "message", "response.function_call_arguments.delta": "function_call",
				"response.reasoning_summary_text.delta": "reasoning", "response.mcp_call_arguments.delta": "mcp_call"}[typ]
			if it.typ != want || (want == "message" && it.parts == 0) {
				t.Errorf("event %d: %s on %s", i, typ, it.typ)
			}
			it.text += str(ev.Data["delta"])
		case "response.output_text.done", "response.reasoning_summary_text.done":
			if it := item(); str(ev.Data["text"]) != it.text {
				t.Errorf("event %d: %s text %q, deltas gave %q", i, typ, ev.Data["text"], it.text)
			}
		case "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed":
			if it := item(); it.typ != "mcp_call" {
				t.Errorf("event %d: %s on %s", i, typ, it.typ)
			}
		case "response.function_call_arguments.done", "response.mcp_call_arguments.done":
			if it := item(); str(ev.Data["arguments"]) != it.text && it.text != "" {
				t.Errorf("event %d: arguments %q, deltas gave %q", i, ev.Data["arguments"], it.text)
			}
		case "response.output_item.done":
			it := item()
			done, _ := ev.Data["item"].(map[string]any)
			if str(done["id"]) != it.id || str(done["type"]) != it.typ || str(done["call_id"]) != it.callID {
				t.Errorf("event %d: done item identity differs", i)
			}
			if it.typ == "function_call" && done["status"] != "completed" && done["status"] != "incomplete" {
				t.Errorf("event %d: function_call done without status", i)
			}
			if it.typ == "mcp_call" {
				if st := str(done["status"]); st != "completed" && st != "failed" && st != "incomplete" {
					t.Errorf("event %d: mcp_call done with status %q", i, st)
				}
				if done["status"] == "completed" && done["output"] == nil {
					t.Errorf("event %d: completed mcp_call without output", i)
				}
			}
		case "error":
			if _, ok := ev.Data["message"].(string); !ok {
				t.Errorf("error event without flat message")
			}
			if e, ok := ev.Data["error"].(map[string]any); !ok || str(e["message"]) == "" {
				t.Errorf("error event without nested error")
			}
		case "response.content_part.done", "response.reasoning_summary_part.done", extToolResult:
		default:
			t.Errorf("event %d: unexpected event type %q", i, typ)
		}
	}
	t.Fatalf("stream has no terminal event")
	return nil
}
