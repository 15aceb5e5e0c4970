package session

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzSplitStateDelta: any input either fails with ErrInvalid or routes every non-temp
// key of the object to exactly one tier with its value intact.
func FuzzSplitStateDelta(f *testing.F) {
	for _, s := range []string{
		`{"app:a":1,"user:b":"x","c":null,"temp:d":[1]}`, `{}`, `null`, `[1]`, `"s"`, `1`, ``,
		`{"app:":1,"user:":2,"temp:":3,"app":4}`, `{"a":1,"a":null}`, `{"a":{"b":[1,{"c":true}]}}`,
		`{"app:x":1,"x":2,"user:x":3}`, "{\"\xff\":1}", `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, delta []byte) {
		app, user, sess, err := SplitStateDelta(delta)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if len(delta) == 0 {
			if app != nil || user != nil || sess != nil {
				t.Fatal("empty delta produced tiers")
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(delta, &m); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", delta, err)
		}
		routed := 0
		for k, v := range m {
			var got any
			var ok bool
			switch {
			case strings.HasPrefix(k, TierTempPrefix):
				continue
			case len(k) > len(TierAppPrefix) && strings.HasPrefix(k, TierAppPrefix):
				got, ok = app[k[len(TierAppPrefix):]]
			case len(k) > len(TierUserPrefix) && strings.HasPrefix(k, TierUserPrefix):
				got, ok = user[k[len(TierUserPrefix):]]
			default:
				got, ok = sess[k]
			}
			if !ok || !reflect.DeepEqual(got, v) {
				t.Fatalf("key %q: routed %v (%v), want %v", k, got, ok, v)
			}
			routed++
		}
		if n := len(app) + len(user) + len(sess); n != routed {
			t.Fatalf("tiers hold %d keys, input routes %d", n, routed)
		}
	})
}

// FuzzProject: arbitrary event types and payloads never panic and never put control
// events into history.
func FuzzProject(f *testing.F) {
	f.Add(TypeUserMessage, []byte(`{"text":"hi","content":[{"type":"input_image","image_url":"x"}]}`),
		TypeToolCall, []byte(`{"call_id":"c","name":"f","arguments":"{}"}`), int64(1))
	f.Add(TypeRunStatus, []byte(`{"status":"completed"}`), TypeReasoning, []byte(`{"text":"x"}`), int64(0))
	f.Add(TypeApprovalResponse, []byte(`{"approve":true,"reason":"ok"}`), TypeAttachmentRef, []byte(`"ksadk-upload://x"`), int64(3))
	f.Add(TypeContextCheckpoint, []byte(`{"summary":"s","until_seq":9}`), TypeAssistantMessage, []byte(`null`), int64(-5))
	f.Add(TypeToolResult, []byte(`{"output":1}`), "unknown", []byte(`{`), int64(1<<62))
	f.Fuzz(func(t *testing.T, t1 string, d1 []byte, t2 string, d2 []byte, until int64) {
		cp := MustJSON(ContextCheckpointData{Summary: "sum", UntilSeq: until})
		evs := []Event{
			{Seq: 1, Type: t1, Data: d1},
			{Seq: 2, Type: t2, Data: d2},
			{Seq: 3, Type: TypeContextCheckpoint, Data: cp},
			{Seq: 4, Type: t2, Data: d1},
			{Seq: 5, Type: t1, Data: d2},
		}
		for _, m := range Project(evs) {
			switch m.Type {
			case TypeUserMessage, TypeAssistantMessage, TypeToolCall, TypeToolResult,
				TypeApprovalRequest, TypeApprovalResponse, TypeAttachmentRef, TypeContextCheckpoint:
			default:
				t.Fatalf("%q entered history", m.Type)
			}
			if m.Role != "user" && m.Role != "assistant" {
				t.Fatalf("role %q", m.Role)
			}
			if m.Seq < 1 || m.Seq > 5 || evs[m.Seq-1].Type != m.Type {
				t.Fatalf("message %+v does not come from its event", m)
			}
		}
	})
}
