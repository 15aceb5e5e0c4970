package adkweb

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/host"
)

func body(fields string, parts ...string) string {
	msg := `{"role":"user","parts":[` + strings.Join(parts, ",") + `]}`
	if fields != "" {
		fields += ","
	}
	return `{` + fields + `"appName":"echo","userId":"u","sessionId":"s","newMessage":` + msg + `}`
}

func TestParseRunRequest(t *testing.T) {
	snake := `{"app_name":"echo","user_id":"u","session_id":"s","streaming":true,"state_delta":{"a":1},"invocation_id":"i",
		"function_call_event_id":"e","model":"ignored","new_message":{"parts":[{"text":"hi"},
		{"inline_data":{"mime_type":"image/png","data":"iVBORw0KGgo","display_name":"p.png"}},
		{"file_data":{"file_uri":"gs://b/f.pdf","mime_type":"application/pdf"}},
		{"function_response":{"id":"c1","name":"lookup","response":{"ok":true},"will_continue":false}}]}}`
	r, aerr := parseRunRequest([]byte(snake))
	if aerr != nil {
		t.Fatal(aerr)
	}
	if r.AppName != "echo" || r.UserID != "u" || r.SessionID != "s" || !r.Streaming || string(r.StateDelta) != `{"a":1}` ||
		r.InvocationID != "i" || r.FunctionCallEventID != "e" || len(r.Parts) != 4 {
		t.Fatalf("%+v", r)
	}
	p := r.Parts
	if p[0].Kind != partText || p[0].Text != "hi" || p[1].Kind != partInline || p[1].Data != "iVBORw0KGgo=" || p[1].MimeType != "image/png" ||
		p[2].Kind != partFile || p[2].URI != "gs://b/f.pdf" || p[3].Kind != partFunctionResponse || p[3].ID != "c1" || string(p[3].Response) != `{"ok":true}` {
		t.Errorf("parts %+v", p)
	}
	camel, aerr := parseRunRequest([]byte(body(`"streaming":false,"stateDelta":null`, `{"text":"a","thought":false,"thoughtSignature":"x"}`,
		`{"inlineData":{"data":"aGk-_w"}}`)))
	if aerr != nil {
		t.Fatal(aerr)
	}
	if camel.Streaming || camel.StateDelta != nil || camel.Parts[1].MimeType != "application/octet-stream" || camel.Parts[1].Data != "aGk+/w==" {
		t.Errorf("%+v", camel)
	}

	bad := []struct {
		name, body string
		status     int
		loc        string // the 422 location, as fmt prints it
	}{
		{"not json", `{`, 422, "[body]"},
		{"array", `[1]`, 422, "[body]"},
		{"no app", `{"userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"x"}]}}`, 422, "[body appName]"},
		{"empty app", `{"appName":"","userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"x"}]}}`, 422, "[body appName]"},
		{"user number", `{"appName":"a","userId":1,"sessionId":"s","newMessage":{"parts":[{"text":"x"}]}}`, 422, "[body userId]"},
		{"both spellings", `{"appName":"a","app_name":"a","userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"x"}]}}`, 422, "[body appName]"},
		{"no session", `{"appName":"a","userId":"u","newMessage":{"parts":[{"text":"x"}]}}`, 422, "[body sessionId]"},
		{"no message", `{"appName":"a","userId":"u","sessionId":"s"}`, 422, "[body newMessage]"},
		{"message string", `{"appName":"a","userId":"u","sessionId":"s","newMessage":"hi"}`, 422, "[body newMessage]"},
		{"streaming string", body(`"streaming":"yes"`, `{"text":"x"}`), 422, "[body streaming]"},
		{"state delta list", body(`"stateDelta":[1]`, `{"text":"x"}`), 422, "[body stateDelta]"},
		{"model role", strings.Replace(body("", `{"text":"x"}`), `"role":"user"`, `"role":"model"`, 1), 422, "[body newMessage role]"},
		{"extra content field", strings.Replace(body("", `{"text":"x"}`), `"role":"user"`, `"role":"user","x":1`, 1), 422, "[body newMessage x]"},
		{"no parts", `{"appName":"a","userId":"u","sessionId":"s","newMessage":{"role":"user"}}`, 422, "[body newMessage parts]"},
		{"empty parts", body(""), 422, "[body newMessage parts]"},
		{"parts object", `{"appName":"a","userId":"u","sessionId":"s","newMessage":{"parts":{}}}`, 422, "[body newMessage parts]"},
		{"unknown part type", body("", `{"audio":{"data":"x"}}`), 422, "[body newMessage parts 0 audio]"},
		{"empty part", body("", `{}`), 422, "[body newMessage parts 0]"},
		{"part not object", body("", `"hi"`), 422, "[body newMessage parts 0]"},
		{"two kinds", body("", `{"text":"a","fileData":{"fileUri":"u"}}`), 422, "[body newMessage parts 0]"},
		{"text number", body("", `{"text":3}`), 422, "[body newMessage parts 0 text]"},
		{"inline bad base64", body("", `{"inlineData":{"mimeType":"image/png","data":"***"}}`), 422, "[body newMessage parts 0 inlineData data]"},
		{"inline no data", body("", `{"inlineData":{"mimeType":"image/png"}}`), 422, "[body newMessage parts 0 inlineData data]"},
		{"inline bad mime", body("", `{"inlineData":{"mimeType":"png;x","data":"aGk="}}`), 422, "[body newMessage parts 0 inlineData mimeType]"},
		{"inline extra", body("", `{"inlineData":{"data":"aGk=","size":2}}`), 422, "[body newMessage parts 0 inlineData size]"},
		{"file no uri", body("", `{"fileData":{"mimeType":"a/b"}}`), 422, "[body newMessage parts 0 fileData fileUri]"},
		{"response not object", body("", `{"functionResponse":{"id":"c","name":"n","response":"ok"}}`), 422, "[body newMessage parts 0 functionResponse response]"},
		{"response missing", body("", `{"functionResponse":{"id":"c","name":"n"}}`), 422, "[body newMessage parts 0 functionResponse response]"},
		{"function call part", body("", `{"functionCall":{"name":"f","args":{}}}`), 400, ""},
		{"code part", body("", `{"executable_code":{"code":"1"}}`), 400, ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r, aerr := parseRunRequest([]byte(tc.body))
			if aerr == nil {
				t.Fatalf("accepted: %+v", r)
			}
			if aerr.Status != tc.status {
				t.Fatalf("status %d, want %d: %v", aerr.Status, tc.status, aerr)
			}
			if tc.status == 422 {
				if len(aerr.Fields) != 1 || aerr.Fields[0].Msg == "" || aerr.Fields[0].Type == "" {
					t.Fatalf("fields %+v", aerr.Fields)
				}
				if got := fmt.Sprint(aerr.Fields[0].Loc); got != tc.loc {
					t.Errorf("loc %s, want %s (%s)", got, tc.loc, aerr.Fields[0].Msg)
				}
			} else if aerr.Detail == "" {
				t.Errorf("no detail")
			}
		})
	}
}

func TestTurnInput(t *testing.T) {
	r, aerr := parseRunRequest([]byte(body("", `{"text":"look"}`, `{"inlineData":{"mimeType":"image/png","data":"aGk=","displayName":"p.png"}}`,
		`{"inlineData":{"mimeType":"text/plain","data":"aGk="}}`, `{"fileData":{"fileUri":"https://x/a.jpg","mimeType":"image/jpeg"}}`,
		`{"fileData":{"fileUri":"gs://b/r.pdf","displayName":"r.pdf"}}`,
		`{"functionResponse":{"id":"apr_1","name":"adk_request_confirmation","response":{"response":"{\"confirmed\":true,\"payload\":{}}"}}}`,
		`{"functionResponse":{"id":"call_2","name":"delete_file","response":{"deleted":true}}}`,
		`{"functionResponse":{"id":"call_9","name":"lookup","response":{"v":1}}}`)))
	if aerr != nil {
		t.Fatal(aerr)
	}
	in, outs, aerr := turnParts(r.Parts)
	if aerr != nil {
		t.Fatal(aerr)
	}
	got, _ := json.Marshal(in.Content)
	want := `[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"data:image/png;base64,aGk=","filename":"p.png"},` +
		`{"type":"input_file","file_data":"data:text/plain;base64,aGk="},{"type":"input_image","image_url":"https://x/a.jpg"},` +
		`{"type":"input_file","file_url":"gs://b/r.pdf","filename":"r.pdf"}]`
	if string(got) != want {
		t.Errorf("content\n%s\nwant\n%s", got, want)
	}
	// The confirmation decides by its flag; other responses approve and carry their result.
	if len(outs) != 3 || !outs[0].confirmation || outs[0].ID != "apr_1" || !outs[0].Approve || outs[0].Output != "" ||
		outs[1].confirmation || outs[1].ID != "call_2" || outs[1].Output != `{"deleted":true}` || !outs[1].Approve ||
		string(outs[2].Item) != `{"type":"function_call_output","call_id":"call_9","output":"{\"v\":1}"}` {
		t.Errorf("function responses %+v", outs)
	}

	// As the host sorts them for a session waiting on apr_1 and apr_2 (guarding call_2).
	sorted := host.SortedToolOutputs{
		Resumes: []host.Resume{{ApprovalRequestID: "apr_1", Approve: true}, {CallID: "call_2", Approve: true}},
		Items:   []json.RawMessage{outs[2].Item}, Resumed: []bool{true, true, false}}
	in, aerr = withResponses(in, outs, sorted)
	if aerr != nil || len(in.Resumes) != 2 || len(in.Items) != 1 {
		t.Errorf("input %+v %v", in, aerr)
	}
	unanswered := sorted
	unanswered.Resumed = []bool{false, true, false}
	if _, aerr := withResponses(host.Input{}, outs, unanswered); aerr == nil || aerr.Status != http.StatusBadRequest {
		t.Errorf("a confirmation of nothing pending: %v", aerr)
	}
	twice := host.SortedToolOutputs{Resumes: []host.Resume{{ApprovalRequestID: "apr_1"}, {ApprovalRequestID: "apr_1"}}, Resumed: []bool{true, true}}
	if _, aerr := withResponses(host.Input{}, outs[:2], twice); aerr == nil || aerr.Status != http.StatusBadRequest {
		t.Errorf("answering twice: %v", aerr)
	}

	bad := []struct {
		name, part string
		status     int
	}{
		{"confirmed not bool", `{"functionResponse":{"id":"apr_1","name":"adk_request_confirmation","response":{"confirmed":"yes"}}}`, 422},
		{"bad wrapper", `{"functionResponse":{"id":"apr_1","name":"adk_request_confirmation","response":{"response":"nope"}}}`, 422},
		{"no id", `{"functionResponse":{"name":"lookup","response":{}}}`, 422},
	}
	for _, tc := range bad {
		r, aerr := parseRunRequest([]byte(body("", tc.part)))
		if aerr != nil {
			t.Fatalf("%s: %v", tc.name, aerr)
		}
		if _, _, aerr := turnParts(r.Parts); aerr == nil || aerr.Status != tc.status {
			t.Errorf("%s: %v, want status %d", tc.name, aerr, tc.status)
		}
	}
	rejected, _ := parseRunRequest([]byte(body("", `{"functionResponse":{"id":"apr_2","name":"adk_request_confirmation","response":{}}}`)))
	if _, outs, aerr := turnParts(rejected.Parts); aerr != nil || outs[0].Approve {
		t.Errorf("a confirmation without confirmed must reject: %+v %v", outs, aerr)
	}
}

func FuzzParseRunRequest(f *testing.F) {
	for _, s := range []string{
		body("", `{"text":"hi"}`),
		body(`"streaming":true,"state_delta":{"a":{"b":[1]}}`, `{"inline_data":{"mime_type":"image/png","data":"aGk="}}`, `{"fileData":{"fileUri":"u"}}`),
		body("", `{"functionResponse":{"id":"apr_1","name":"adk_request_confirmation","response":{"response":"{\"confirmed\":true}"}}}`),
		body("", `{"functionCall":{"name":"f"}}`), body(""), `{`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, aerr := parseRunRequest(b)
		if (r == nil) == (aerr == nil) {
			t.Fatalf("request %v error %v", r, aerr)
		}
		if aerr != nil {
			if aerr.Status < 400 || aerr.Status > 499 || (aerr.Detail == "" && len(aerr.Fields) == 0) {
				t.Fatalf("bad error %+v", aerr)
			}
			return
		}
		if r.AppName == "" || r.UserID == "" || r.SessionID == "" || len(r.Parts) == 0 {
			t.Fatalf("accepted an incomplete request: %+v", r)
		}
		in, outs, aerr := turnParts(r.Parts)
		if aerr != nil {
			if aerr.Status < 400 || aerr.Status > 499 {
				t.Fatalf("bad input error %+v", aerr)
			}
			return
		}
		if in.Empty() && len(outs) == 0 {
			t.Fatalf("accepted parts that make no input: %s", b)
		}
		for _, blk := range in.Content {
			if blk.Type != "input_text" && blk.ImageURL == "" && blk.FileData == "" && blk.FileURL == "" {
				t.Fatalf("media block without a source: %+v", blk)
			}
		}
	})
}
