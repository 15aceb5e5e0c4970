package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var messageSamples = []string{
	`{"role":"user","content":"hello","type":"user_message","seq":1}`,
	`{"role":"assistant","content":"hé 😀 <&>","type":"assistant_message","seq":12345678901}`,
	` { "role" : "assistant" , "content" : "a\"b\\c\nd\u00e9\ud83d\ude00" , "seq" : -3 } `,
	`{"role":"assistant","type":"tool_call","seq":7,"call_id":"c1","name":"lookup","arguments":"{\"q\":1}"}`,
	`{"role":"user","type":"tool_result","seq":8,"call_id":"c1","output":"42","content":"42"}`,
	`{"role":"user","type":"tool_result","seq":8,"output":[{"type":"input_text","text":"x"}],"content":"x"}`,
	`{"role":"user","type":"tool_result","seq":8,"output":{"a":[1,2,{"b":"}"}]}}`,
	`{"role":"user","content":"x","blocks":[{"type":"input_image","image_url":"data:,"}]}`,
	`{"Role":"user","CONTENT":"case"}`,
	`{"role":"user","extra":{"ignored":[1,2]},"content":"x"}`,
	`{"role":null,"content":"x","output":null}`,
	`{"seq":1.0}`, `{"seq":1e3}`, `{"seq":01}`, `{"seq":"1"}`, `{"seq":99999999999999999999}`, `{"seq":-0}`, `{"seq":-}`,
	`{"role":"a","role":"b"}`, `{"role":nullx}`, `{"content":"\x"}`,
	"{\"content\":\"bad \xff utf8\"}",
	"{\"content\":\"ctl \x01\"}",
	`{"content":"unterminated}`, `{"content":"x",}`, `{"content" "x"}`, `{}`, ` {} `, `[]`, `null`, `{"a":1}x`,
	`{"content":"x"}{"content":"y"}`, `{"output":"a" "b"}`, `{"output":tru}`, `1`, `"s"`,
}

// payloads are run payloads around the samples, laid out as the host sends them
// (history first) and otherwise.
func payloads() []string {
	var out []string
	for _, s := range messageSamples {
		out = append(out, `{"history":[`+s+`],"model":"m","session_id":"s"}`, `{"history":[`+s+`,`+messageSamples[0]+`]}`)
	}
	return append(out,
		`{"history":[],"model":"m"}`, `{"history":[]}`, `{"history":null,"model":"m"}`, `{"model":"m","history":[`+messageSamples[0]+`]}`,
		`{"history":[`+messageSamples[0]+`],"history":[`+messageSamples[3]+`]}`, `{"history":[`+messageSamples[0]+`] , "model":5}`,
		`{"history":[`+messageSamples[0]+`]}x`, `{"history":[`+messageSamples[0]+`],}`, `{"history":[`+messageSamples[0]+` `+messageSamples[0]+`]}`,
		`{"history":[`+messageSamples[0]+`,]}`, `{"history":[1],"model":"m"}`, `{"history":`, `{"history":[{"role":"u"}`, ``)
}

// UnmarshalPayload gives what encoding/json gives, and fails when it fails.
func TestUnmarshalPayloadMatchesEncodingJSON(t *testing.T) {
	for _, s := range payloads() {
		checkPayloadDecode(t, []byte(s))
	}
	var p Payload
	raw := []byte(`{"history":[` + strings.Join(messageSamples[:7], ",") + `],"model":"m","input":"hi"}`)
	if err := UnmarshalPayload(raw, &p); err != nil || len(p.History) != 7 || p.History[3].Name != "lookup" || p.Model != "m" {
		t.Errorf("payload %+v, %v", p, err)
	}
}

func checkPayloadDecode(t *testing.T, b []byte) {
	t.Helper()
	orig := string(b)
	var fast, slow Payload
	errFast := UnmarshalPayload(b, &fast)
	if string(b) != orig {
		t.Fatalf("%q: the input changed to %q", orig, b)
	}
	errSlow := json.Unmarshal(b, &slow)
	if (errFast == nil) != (errSlow == nil) {
		t.Fatalf("%q: fast err %v, encoding/json err %v", b, errFast, errSlow)
	}
	if errSlow == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %+v\nslow %+v", b, fast, slow)
	}
}

func FuzzUnmarshalPayload(f *testing.F) {
	for _, s := range payloads() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkPayloadDecode(t, b) })
}

func BenchmarkHistoryDecode(b *testing.B) {
	hist := make([]Message, 110)
	for i := range hist {
		hist[i] = Message{Role: "user", Content: "a message of a long conversation, like most", Type: "user_message", Seq: int64(i*5 + 1)}
		if i%2 == 1 {
			hist[i].Role, hist[i].Type = "assistant", "assistant_message"
		}
	}
	enc, err := json.Marshal(hist)
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"history":` + string(enc) + `,"model":"echo","input":"hello","session_id":"sess_1"}`)
	b.SetBytes(int64(len(raw)))
	b.Run("UnmarshalPayload", func(b *testing.B) {
		for b.Loop() {
			var p Payload
			if err := UnmarshalPayload(raw, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var p Payload
			if err := json.Unmarshal(raw, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
