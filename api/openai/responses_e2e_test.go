package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

func TestResponsesNonStream(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"model":"echo","input":"hello there","metadata":{"k":"v"},"instructions":"be kind","temperature":0.5}`
	r := e.json("POST", "/v1/responses", body, 200)
	_, _, raw := e.do("POST", "/v1/responses", body)
	golden(t, "e2e_responses_object_text.json", normalise(indentRaw(t, raw)))
	if r["status"] != "completed" || r["output_text"] != "Echo: hello there" || r["object"] != "response" {
		t.Fatalf("%v", r)
	}
	if got := outputTypes(r); strings.Join(got, ",") != "reasoning,message" {
		t.Errorf("output types %v", got)
	}
	if r["instructions"] != "be kind" || r["temperature"] != 0.5 || r["metadata"].(map[string]any)["k"] != "v" || r["model"] != "echo" {
		t.Errorf("echo fields %v", r)
	}
	if u := r["usage"].(map[string]any); u["output_tokens"].(float64) == 0 || u["total_tokens"].(float64) == 0 {
		t.Errorf("usage %v", u)
	}
	// GET returns the same object.
	got := e.json("GET", "/v1/responses/"+str(r["id"]), "", 200)
	if !jsonEqual(got, r) {
		t.Errorf("GET differs:\n%v\n%v", got, r)
	}
}

// A long answer goes out with its text written in place as the answer is sent
// (httpx.Spill), byte for byte the JSON it would be otherwise.
func TestResponsesNonStreamLongText(t *testing.T) {
	e := newEnv(t, Config{})
	input := strings.Repeat("long \"text\" é😀\\n\x01<&> ", 20000) + "end" // ~600 KB once escaped
	body, err := json.Marshal(map[string]any{"model": "echo", "input": input})
	if err != nil {
		t.Fatal(err)
	}
	r := e.json("POST", "/v1/responses", string(body), 200)
	want := "Echo: " + input
	content := r["output"].([]any)[len(r["output"].([]any))-1].(map[string]any)["content"].([]any)[0].(map[string]any)
	if r["output_text"] != want || content["text"] != want {
		t.Fatalf("output_text %d bytes, content %d bytes, want %d", len(str(r["output_text"])), len(str(content["text"])), len(want))
	}
	if got := e.json("GET", "/v1/responses/"+str(r["id"]), "", 200); !jsonEqual(got, r) {
		t.Error("GET differs from the POST's answer")
	}
}

func TestResponsesStream(t *testing.T) {
	e := newEnv(t, Config{})
	evs := e.stream("/v1/responses", `{"model":"echo","input":"hello there","stream":true}`)
	final := checkResponsesStream(t, evs)
	var tr bytes.Buffer
	for _, ev := range evs {
		fmt.Fprintf(&tr, "event: %s\ndata: %s\n\n", ev.Name, ev.Raw)
	}
	golden(t, "e2e_responses_stream_text.sse", normalise(tr.Bytes()))
	if final["status"] != "completed" || final["output_text"] != "Echo: hello there" {
		t.Fatalf("%v", final)
	}
	id := str(final["id"])
	// GET shows the same items; a replay is the same stream; starting_after skips.
	got := e.json("GET", "/v1/responses/"+id, "", 200)
	if !jsonEqual(got["output"], final["output"]) {
		t.Errorf("GET output differs")
	}
	status, _, replay := e.do("GET", "/v1/responses/"+id+"?stream=true", "")
	if status != 200 || !bytes.Equal(replay, tr.Bytes()) {
		t.Errorf("replay differs from the original stream:\n%s", replay)
	}
	_, _, tail := e.do("GET", "/v1/responses/"+id+"?stream=true&starting_after=5", "")
	tailEvs := parseSSE(t, tail)
	if len(tailEvs) != len(evs)-6 || num(tailEvs[0].Data["sequence_number"]) != 6 {
		t.Errorf("starting_after=5 gave %d events from %v", len(tailEvs), tailEvs[0].Data["sequence_number"])
	}
}

// A long streamed answer: its text is written in place (httpx.Spill) in the deltas, the
// done events and the final response, and the stream is as valid as a short one.
func TestResponsesStreamLongText(t *testing.T) {
	e := newEnv(t, Config{})
	input := strings.Repeat("long\"text\"é😀\\n\x01<&>", 30000) // one word: one long delta
	body, err := json.Marshal(map[string]any{"model": "echo", "input": input, "stream": true})
	if err != nil {
		t.Fatal(err)
	}
	evs := e.stream("/v1/responses", string(body))
	final := checkResponsesStream(t, evs)
	want := "Echo: " + input
	var deltas strings.Builder
	done := ""
	for _, ev := range evs {
		switch ev.Name {
		case "response.output_text.delta":
			deltas.WriteString(str(ev.Data["delta"]))
		case "response.output_text.done":
			done = str(ev.Data["text"])
		}
	}
	if deltas.String() != want || done != want || final["output_text"] != want {
		t.Fatalf("deltas %d bytes, done %d bytes, output_text %d bytes; want %d", deltas.Len(), len(done), len(str(final["output_text"])), len(want))
	}
}

func TestResponsesToolCall(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.json("POST", "/v1/responses", `{"model":"echo","input":"use the tool on paris"}`, 200)
	if got := strings.Join(outputTypes(r), ","); got != "mcp_call,message" {
		t.Fatalf("output %s", got)
	}
	mc := outputItem(r, "mcp_call")
	if mc["name"] != "lookup" || mc["arguments"] != `{"query":"paris"}` || mc["status"] != "completed" || mc["server_label"] != "echo" ||
		!strings.Contains(str(mc["output"]), `"query":"paris"`) || mc["error"] != nil {
		t.Errorf("mcp_call %v", mc)
	}
	// The KsADK switch: a function_call item, by header or by the project's setting.
	for _, k := range []struct {
		cfg Config
		hdr []string
	}{{Config{}, []string{HeaderCompat, "ksadk"}}, {Config{KsadkAgents: []string{"echo"}}, nil}} {
		ke := newEnv(t, k.cfg)
		r := ke.json("POST", "/v1/responses", `{"model":"echo","input":"use the tool on paris"}`, 200, k.hdr...)
		if got := strings.Join(outputTypes(r), ","); got != "function_call,message" {
			t.Fatalf("KsADK shape output %s", got)
		}
		fc := outputItem(r, "function_call")
		if fc["name"] != "lookup" || fc["arguments"] != `{"query":"paris"}` || fc["status"] != "completed" || !strings.HasPrefix(str(fc["id"]), "fc_") {
			t.Errorf("function_call %v", fc)
		}
	}
	// The header can also turn the project's KsADK setting off, and rejects other values.
	oe := newEnv(t, Config{KsadkAgents: []string{"echo"}})
	if got := strings.Join(outputTypes(oe.json("POST", "/v1/responses", `{"model":"echo","input":"use the tool on paris"}`, 200, HeaderCompat, "openai")), ","); got != "mcp_call,message" {
		t.Errorf("openai header output %s", got)
	}
	oe.apiErr("POST", "/v1/responses", `{"model":"echo","input":"x"}`, 400, "unsupported_value", HeaderCompat, "v2")
	// A function tool the client declared is a function_call, which the client runs.
	dr := e.json("POST", "/v1/responses", `{"model":"echo","input":"use the tool on paris","tools":[{"type":"function","name":"lookup","parameters":{}}]}`, 200)
	if got := strings.Join(outputTypes(dr), ","); got != "function_call,message" {
		t.Errorf("declared tool output %s", got)
	}
	// Tool results are an opt-in extension event.
	plain := e.stream("/v1/responses", `{"model":"echo","input":"use the tool on rome","stream":true}`)
	checkResponsesStream(t, plain)
	for _, ev := range plain {
		if ev.Name == extToolResult {
			t.Fatalf("extension event without opt-in")
		}
	}
	for _, opt := range []struct{ body, hdr string }{
		{`{"model":"echo","input":"use the tool on rome","stream":true,"ksadk_events":true}`, ""},
		{`{"model":"echo","input":"use the tool on rome","stream":true}`, "tool_result"},
	} {
		var hdr []string
		if opt.hdr != "" {
			hdr = []string{HeaderExtensions, opt.hdr}
		}
		evs := e.stream("/v1/responses", opt.body, hdr...)
		checkResponsesStream(t, evs)
		found := false
		for _, ev := range evs {
			if ev.Name == extToolResult && strings.Contains(str(ev.Data["output"]), `"query":"rome"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no tool result event with %q / %q", opt.body, opt.hdr)
		}
	}
}

func TestResponsesApprovalRoundTrip(t *testing.T) {
	e := newEnv(t, Config{})
	// OpenAI's shape: the pause is completed, the guarded call is not an item yet.
	ask := func(extra string) (map[string]any, string) {
		r := e.json("POST", "/v1/responses", `{"model":"echo","input":"please approve deleting notes.txt"`+extra+`}`, 200)
		if r["status"] != "completed" || r["incomplete_details"] != nil {
			t.Fatalf("approval response status %v %v", r["status"], r["incomplete_details"])
		}
		if got := strings.Join(outputTypes(r), ","); got != "message,mcp_approval_request" {
			t.Fatalf("approval output %s", got)
		}
		apr := outputItem(r, "mcp_approval_request")
		if apr == nil || apr["name"] != "delete_file" || apr["server_label"] != "echo" || !strings.HasPrefix(str(apr["id"]), "apr_") {
			t.Fatalf("approval item %v", apr)
		}
		return r, str(apr["id"])
	}
	t.Run("KsADK shape: incomplete with a reason", func(t *testing.T) {
		r := e.json("POST", "/v1/responses", `{"model":"echo","input":"please approve deleting notes.txt"}`, 200, HeaderCompat, "ksadk")
		d, _ := r["incomplete_details"].(map[string]any)
		if r["status"] != "incomplete" || d["reason"] != "approval_required" || outputItem(r, "function_call") == nil {
			t.Fatalf("KsADK approval response %v", r)
		}
		evs := e.stream("/v1/responses", `{"model":"echo","input":"please approve deleting notes.txt","stream":true}`, HeaderCompat, "ksadk")
		last := evs[len(evs)-1]
		if last.Name != "response.incomplete" || last.Data["status"] != "incomplete" || last.Data["type"] != nil {
			t.Fatalf("KsADK stream terminal %s %s", last.Name, last.Raw)
		}
	})
	t.Run("previous_response_id approve", func(t *testing.T) {
		r, apr := ask("")
		res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","previous_response_id":%q,"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":true}]}`, r["id"], apr), 200)
		if res["output_text"] != "Approved: deleted notes.txt." || res["session_id"] != r["session_id"] || res["previous_response_id"] != r["id"] {
			t.Fatalf("resume %v", res)
		}
		// The call that needed approval ran: an mcp_call naming the approval.
		mc := outputItem(res, "mcp_call")
		if mc == nil || mc["approval_request_id"] != apr || mc["name"] != "delete_file" || mc["arguments"] != `{"path":"notes.txt"}` || !strings.Contains(str(mc["output"]), "notes.txt") {
			t.Fatalf("resume mcp_call %v", mc)
		}
		// Answered: a second answer has nothing pending.
		e.apiErr("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","previous_response_id":%q,"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":true}]}`, res["id"], apr), 400, "no_pending_approval")
	})
	t.Run("stateless resend approve", func(t *testing.T) {
		// The Agents SDKs resend the whole conversation and name no session.
		r, apr := ask("")
		items := []any{map[string]any{"role": "user", "content": "please approve deleting notes.txt"}}
		items = append(items, r["output"].([]any)...)
		items = append(items, map[string]any{"type": "mcp_approval_response", "approval_request_id": apr, "approve": true})
		in, _ := json.Marshal(items)
		res := e.json("POST", "/v1/responses", `{"model":"echo","input":`+string(in)+`}`, 200)
		if res["output_text"] != "Approved: deleted notes.txt." || res["session_id"] != r["session_id"] {
			t.Fatalf("stateless resume %v", res)
		}
		if mc := outputItem(res, "mcp_call"); mc == nil || mc["approval_request_id"] != apr {
			t.Fatalf("stateless resume output %v", res["output"])
		}
	})
	t.Run("conversation reject", func(t *testing.T) {
		_, apr := ask(`,"conversation":"conv-reject"`)
		res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":{"id":"conv-reject"},"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":false,"reason":"keep it"}]}`, apr), 200)
		if res["output_text"] != "Rejected: kept notes.txt (keep it)." || res["conversation"].(map[string]any)["id"] != "conv-reject" {
			t.Fatalf("resume %v", res)
		}
	})
	t.Run("function_call_output resumes", func(t *testing.T) {
		r := e.json("POST", "/v1/responses", `{"model":"echo","input":"please approve deleting notes.txt","conversation":"conv-fco"}`, 200, HeaderCompat, "ksadk")
		call := str(outputItem(r, "function_call")["call_id"])
		res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","conversation":"conv-fco","input":[{"type":"function_call_output","call_id":%q,"output":"done by client"}]}`, call), 200)
		if res["output_text"] != "Approved: deleted notes.txt." {
			t.Fatalf("resume %v", res)
		}
	})
	t.Run("function_call_output without pending approval is an item", func(t *testing.T) {
		res := e.json("POST", "/v1/responses", `{"model":"echo","conversation":"conv-item","input":[{"type":"function_call_output","call_id":"call_x","output":"42"},{"role":"user","content":"hello"}]}`, 200)
		if res["output_text"] != "Echo: hello" {
			t.Fatalf("%v", res)
		}
	})
	t.Run("resume with nothing pending changes nothing", func(t *testing.T) {
		e.json("POST", "/v1/responses", `{"model":"echo","conversation":"conv-none","input":"hi"}`, 200)
		before := e.sessionSeq("", "conv-none")
		e.apiErr("POST", "/v1/responses", `{"model":"echo","conversation":"conv-none","input":[{"type":"mcp_approval_response","approval_request_id":"apr_nope","approve":true}]}`, 400, "no_pending_approval")
		if after := e.sessionSeq("", "conv-none"); after != before {
			t.Errorf("store changed: seq %d → %d", before, after)
		}
	})
}

func TestResponsesMultiTurn(t *testing.T) {
	e := newEnv(t, Config{})
	first := e.json("POST", "/v1/responses", `{"model":"echo","input":"one two three"}`, 200)
	second := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","previous_response_id":%q,"input":"four"}`, first["id"]), 200)
	if second["session_id"] != first["session_id"] {
		t.Fatalf("previous_response_id started a new session")
	}
	// The echo agent counts history words in input_tokens: the earlier turn is there.
	if in := second["usage"].(map[string]any)["input_tokens"].(float64); in <= 1 {
		t.Errorf("input_tokens %v: history not carried", in)
	}
	third := e.json("POST", "/v1/responses", `{"model":"echo","conversation":"conv-1","input":"a"}`, 200)
	fourth := e.json("POST", "/v1/responses", `{"model":"echo","session_id":"conv-1","input":"b"}`, 200)
	if third["session_id"] != "conv-1" || fourth["session_id"] != "conv-1" || fourth["conversation"] != nil {
		t.Errorf("conversation %v / session_id %v", third["session_id"], fourth["session_id"])
	}
	if third["conversation"].(map[string]any)["id"] != "conv-1" {
		t.Errorf("conversation echo %v", third["conversation"])
	}
	// A stateless client's transcript reaches the runner as history: 1 + 3 + 4 words.
	stateless := e.json("POST", "/v1/responses", `{"model":"echo","input":[{"role":"user","content":"alpha beta gamma"},{"role":"assistant","content":"Echo: alpha beta gamma"},{"role":"user","content":"delta"}]}`, 200)
	if stateless["output_text"] != "Echo: delta" || stateless["usage"].(map[string]any)["input_tokens"] != 8.0 {
		t.Errorf("stateless transcript: %v %v", stateless["output_text"], stateless["usage"])
	}
	// An item reference resolves to the stored item (AI SDK tool loops).
	msg := outputItem(first, "message")
	res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","input":[{"type":"item_reference","id":%q},{"role":"user","content":"again"}]}`, msg["id"]), 200)
	items := e.json("GET", "/v1/responses/"+str(res["id"])+"/input_items?order=asc", "", 200)
	data := items["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["id"] != msg["id"] || data[0].(map[string]any)["role"] != "assistant" {
		t.Errorf("input items %v", items)
	}
	e.apiErr("POST", "/v1/responses", `{"model":"echo","input":[{"type":"item_reference","id":"msg_unknown"}]}`, 404, "not_found")
	// Another agent cannot continue this response's session.
	e.apiErr("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo2","previous_response_id":%q,"input":"x"}`, first["id"]), 400, "invalid_value")
}

func TestResponsesFailure(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.json("POST", "/v1/responses", `{"model":"echo","input":"fail"}`, 200)
	errObj, _ := r["error"].(map[string]any)
	if r["status"] != "failed" || errObj == nil || errObj["code"] != "server_error" || !strings.Contains(str(errObj["message"]), "fail") {
		t.Fatalf("%v", r)
	}
	evs := e.stream("/v1/responses", `{"model":"echo","input":"fail","stream":true}`)
	final := checkResponsesStream(t, evs)
	if final["status"] != "failed" || evs[len(evs)-2].Name != "error" {
		t.Fatalf("stream %v", final)
	}
	var tr bytes.Buffer
	for _, ev := range evs {
		fmt.Fprintf(&tr, "event: %s\ndata: %s\n\n", ev.Name, ev.Raw)
	}
	golden(t, "e2e_responses_stream_failure.sse", normalise(tr.Bytes()))
}

func TestResponsesErrors(t *testing.T) {
	e := newEnv(t, Config{MaxBodyBytes: 4096})
	cases := []struct {
		name, body  string
		status      int
		code, param string
		headers     []string
	}{
		{"malformed json", `{"model":`, 400, "invalid_json", "", nil},
		{"input number", `{"model":"echo","input":5}`, 400, "invalid_type", "input", nil},
		{"stream string", `{"model":"echo","input":"x","stream":"yes"}`, 400, "invalid_type", "stream", nil},
		{"unknown item", `{"model":"echo","input":[{"type":"web_search_call"}]}`, 400, "unsupported_value", "input[0].type", nil},
		{"unknown model", `{"model":"gpt-9","input":"x"}`, 404, "model_not_found", "model", nil},
		{"unknown previous", `{"model":"echo","previous_response_id":"resp_nope","input":"x"}`, 404, "not_found", "previous_response_id", nil},
		{"conversation and previous", `{"model":"echo","conversation":"c","previous_response_id":"resp_1","input":"x"}`, 400, "invalid_value", "previous_response_id", nil},
		{"too large", `{"model":"echo","input":"` + strings.Repeat("x", 5000) + `"}`, 413, "request_too_large", "", nil},
		{"content type", `{"model":"echo","input":"x"}`, 415, "unsupported_media_type", "", []string{"Content-Type", "text/plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := e.apiErr("POST", "/v1/responses", tc.body, tc.status, tc.code, tc.headers...)
			if tc.param != "" && obj["param"] != tc.param {
				t.Errorf("param %v, want %s", obj["param"], tc.param)
			}
		})
	}
	obj := e.apiErr("POST", "/v1/responses", `{"model":"gpt-9","input":"x"}`, 404, "model_not_found")
	if !strings.Contains(str(obj["message"]), "echo, echo2") {
		t.Errorf("unknown model message should list the agents: %v", obj["message"])
	}
	for _, path := range []string{"/v1/responses/resp_nope", "/v1/responses/resp_nope/input_items"} {
		e.apiErr("GET", path, "", 404, "not_found")
	}
	e.apiErr("DELETE", "/v1/responses/resp_nope", "", 404, "not_found")
	e.apiErr("POST", "/v1/responses/resp_nope/cancel", "", 404, "not_found")
}

func TestResponsesConcurrentRun(t *testing.T) {
	e := newEnv(t, Config{})
	bg := e.json("POST", "/v1/responses", `{"model":"echo","conversation":"busy","input":"slow","background":true,"model_options":{"delay_ms":100,"deltas":5}}`, 200)
	if bg["status"] != "in_progress" || bg["background"] != true {
		t.Fatalf("background %v", bg)
	}
	status, hdr, b := e.do("POST", "/v1/responses", `{"model":"echo","conversation":"busy","input":"again"}`)
	if status != 409 || hdr.Get("x-should-retry") != "false" || !strings.Contains(string(b), "run_in_progress") {
		t.Fatalf("%d %s", status, b)
	}
	done := e.waitStatus(str(bg["id"]))
	if done["status"] != "completed" {
		t.Fatalf("%v", done["status"])
	}
}

func TestResponsesBackgroundAndCancel(t *testing.T) {
	// A cancel that finds no active run returns the response as it is after CancelWait.
	e := newEnv(t, Config{CancelWait: 2 * time.Second})
	slow := `"model_options":{"delay_ms":50,"deltas":200}`
	bg := e.json("POST", "/v1/responses", `{"model":"echo","input":"slow","background":true,`+slow+`}`, 200)
	id := str(bg["id"])
	c := e.json("POST", "/v1/responses/"+id+"/cancel", "", 200)
	if c["status"] != "cancelled" {
		t.Fatalf("cancel: %v", c["status"])
	}
	// Idempotent: the finished response comes back unchanged.
	if again := e.json("POST", "/v1/responses/"+id+"/cancel", "", 200); again["status"] != "cancelled" {
		t.Errorf("second cancel %v", again["status"])
	}
	// A streaming (non-background) run can be cancelled too; its stream ends with
	// response.incomplete, status cancelled.
	done := make(chan []wireEvent)
	go func() {
		status, _, b := e.do("POST", "/v1/responses", `{"model":"echo","conversation":"cancel-me","input":"slow","stream":true,`+slow+`}`)
		if status != 200 {
			done <- nil
			return
		}
		done <- parseSSE(t, b)
	}()
	var rid string
	testutil.Eventually(t, 5*time.Second, func() error {
		s, err := e.rt.Session(context.Background(), sessionKey(e, "cancel-me"))
		if err != nil || s.ActiveInvocationID == "" {
			return fmt.Errorf("stream run has not started (session %+v, %v)", s, err)
		}
		run, err := e.rt.Open(context.Background(), sessionKey(e, "cancel-me"), s.ActiveInvocationID)
		if err != nil {
			return fmt.Errorf("stream run: %w", err)
		}
		rid = run.ResponseID
		return nil
	})
	// The store names the run before the runtime can cancel it (a client learns the id
	// later, from response.created): a cancel in between finds no active run and returns
	// the response unchanged, so it is sent until it takes.
	testutil.Eventually(t, 8*time.Second, func() error {
		if c := e.json("POST", "/v1/responses/"+rid+"/cancel", "", 200); c["status"] != "cancelled" {
			return fmt.Errorf("cancel answered %v", c["status"])
		}
		return nil
	})
	evs := <-done
	final := checkResponsesStream(t, evs)
	if evs[len(evs)-1].Name != "response.incomplete" || final["status"] != "cancelled" {
		t.Errorf("cancelled stream ended with %s / %v", evs[len(evs)-1].Name, final["status"])
	}
}

func TestResponsesStoreFalseAndDelete(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.json("POST", "/v1/responses", `{"model":"echo","input":"private","store":false}`, 200)
	if r["store"] != false || r["status"] != "completed" {
		t.Fatalf("%v", r)
	}
	e.apiErr("GET", "/v1/responses/"+str(r["id"]), "", 404, "not_found")
	e.apiErr("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","previous_response_id":%q,"input":"x"}`, r["id"]), 404, "not_found")

	kept := e.json("POST", "/v1/responses", `{"model":"echo","input":"public"}`, 200)
	del := e.json("DELETE", "/v1/responses/"+str(kept["id"]), "", 200)
	if del["deleted"] != true || del["object"] != "response" || del["id"] != kept["id"] {
		t.Errorf("%v", del)
	}
	e.apiErr("GET", "/v1/responses/"+str(kept["id"]), "", 404, "not_found")
}

func TestResponsesTenants(t *testing.T) {
	e := newEnv(t, Config{})
	a := e.json("POST", "/v1/responses", `{"model":"echo","input":"mine","user":"alice"}`, 200)
	e.json("GET", "/v1/responses/"+str(a["id"]), "", 200, HeaderUser, "alice")
	e.apiErr("GET", "/v1/responses/"+str(a["id"]), "", 404, "not_found", HeaderUser, "bob")
	e.apiErr("GET", "/v1/responses/"+str(a["id"]), "", 404, "not_found") // default user
	// A caller bound to a user (the trusted header here) is that user whatever the body says.
	b := e.json("POST", "/v1/responses", `{"model":"echo","input":"x","user":"alice"}`, 200, HeaderUser, "bob")
	e.json("GET", "/v1/responses/"+str(b["id"]), "", 200, HeaderUser, "bob")
	// safety_identifier is the tenant when there is no header.
	c := e.json("POST", "/v1/responses", `{"model":"echo","input":"x","user":"alice","safety_identifier":"carol"}`, 200)
	e.json("GET", "/v1/responses/"+str(c["id"]), "", 200, HeaderUser, "carol")
}

func TestResponsesInputItems(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.json("POST", "/v1/responses", `{"model":"echo","input":[{"role":"system","content":"sys"},{"role":"assistant","content":"earlier","id":"msg_client"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"},{"role":"user","content":[{"type":"input_text","text":"now"}]}]}`, 200)
	path := "/v1/responses/" + str(r["id"]) + "/input_items"
	all := e.json("GET", path+"?order=asc", "", 200)
	data := all["data"].([]any)
	var types []string
	for _, d := range data {
		m := d.(map[string]any)
		if str(m["id"]) == "" {
			t.Errorf("item without id: %v", m)
		}
		types = append(types, str(m["type"])+"/"+str(m["role"]))
	}
	if strings.Join(types, ",") != "message/system,message/assistant,function_call/,function_call_output/,message/user" || all["has_more"] != false {
		t.Fatalf("items %v", types)
	}
	if data[1].(map[string]any)["id"] != "msg_client" || all["first_id"] != data[0].(map[string]any)["id"] {
		t.Errorf("ids %v", all)
	}
	desc := e.json("GET", path+"?limit=2", "", 200)
	dd := desc["data"].([]any)
	if len(dd) != 2 || dd[0].(map[string]any)["role"] != "user" || desc["has_more"] != true {
		t.Errorf("desc page %v", desc)
	}
	next := e.json("GET", path+"?limit=2&after="+str(desc["last_id"]), "", 200)
	if nd := next["data"].([]any); len(nd) != 2 || nd[0].(map[string]any)["type"] != "function_call" {
		t.Errorf("next page %v", next)
	}
	e.apiErr("GET", path+"?limit=0", "", 400, "invalid_value")
	e.apiErr("GET", path+"?order=up", "", 400, "invalid_value")
	e.apiErr("GET", path+"?after=nope", "", 400, "invalid_value")
	// An approval answer is listed as sent.
	ask := e.json("POST", "/v1/responses", `{"model":"echo","input":"approve it please"}`, 200)
	apr := outputItem(ask, "mcp_approval_request")
	res := e.json("POST", "/v1/responses", fmt.Sprintf(`{"model":"echo","previous_response_id":%q,"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":true}]}`, ask["id"], apr["id"]), 200)
	items := e.json("GET", "/v1/responses/"+str(res["id"])+"/input_items", "", 200)["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["type"] != "mcp_approval_response" || items[0].(map[string]any)["approval_request_id"] != apr["id"] {
		t.Errorf("resume input items %v", items)
	}
}

func TestResponsesKeepAliveAndDisconnect(t *testing.T) {
	e := newEnv(t, Config{KeepAlive: 20 * time.Millisecond})
	status, _, b := e.do("POST", "/v1/responses", `{"model":"echo","input":"slow","stream":true,"model_options":{"delay_ms":80,"deltas":3}}`)
	if status != 200 || !bytes.Contains(b, []byte("\n: ping\n\n")) && !bytes.HasPrefix(b, []byte(": ping")) {
		t.Errorf("no keep-alive comment in an idle stream")
	}
	checkResponsesStream(t, parseSSE(t, b))

	// A client that goes away does not stop the run.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/responses", strings.NewReader(`{"model":"echo","conversation":"gone","input":"slow","stream":true,"model_options":{"delay_ms":20,"deltas":10}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	_, _ = resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		s, err := e.rt.Session(context.Background(), sessionKey(e, "gone"))
		if err != nil || s.ActiveRunStatus != "completed" {
			return fmt.Errorf("run has not completed after the client left: %+v %v", s, err)
		}
		return nil
	})
}
