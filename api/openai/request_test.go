package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseResponsesRequest(t *testing.T) {
	long := strings.Repeat("x", 513)
	many := map[string]string{}
	for i := 0; i < 17; i++ {
		many[string(rune('a'+i))] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	bad := []struct {
		name, body, param, code string
	}{
		{"not json", `{`, "", "invalid_json"},
		{"not an object", `[1]`, "", "invalid_type"},
		{"null body", `null`, "", "invalid_type"},
		{"no input", `{"model":"m"}`, "input", "missing_required_parameter"},
		{"input number", `{"input":5}`, "input", "invalid_type"},
		{"stream string", `{"input":"hi","stream":"yes"}`, "stream", "invalid_type"},
		{"model number", `{"input":"hi","model":1}`, "model", "invalid_type"},
		{"unknown item type", `{"input":[{"type":"computer_call_output"}]}`, "input[0].type", "unsupported_value"},
		{"item without type", `{"input":[{"content":"x"}]}`, "input[0].type", "missing_required_parameter"},
		{"bad role", `{"input":[{"role":"robot","content":"x"}]}`, "input[0].role", "unsupported_value"},
		{"bad part", `{"input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "input[0].content[0].type", "unsupported_value"},
		{"image without url", `{"input":[{"role":"user","content":[{"type":"input_image"}]}]}`, "input[0].content[0].image_url", "missing_required_parameter"},
		{"file without data", `{"input":[{"role":"user","content":[{"type":"input_file","filename":"a"}]}]}`, "input[0].content[0].file_data", "missing_required_parameter"},
		{"content number", `{"input":[{"role":"user","content":3}]}`, "input[0].content", "invalid_type"},
		{"approval without approve", `{"input":[{"type":"mcp_approval_response","approval_request_id":"a"}]}`, "input[0].approve", "missing_required_parameter"},
		{"approval id missing", `{"input":[{"type":"mcp_approval_response","approve":true}]}`, "input[0].approval_request_id", "missing_required_parameter"},
		{"fco without call_id", `{"input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "missing_required_parameter"},
		{"fco output number", `{"input":[{"type":"function_call_output","call_id":"c","output":1}]}`, "input[0].output", "invalid_type"},
		{"metadata number", `{"input":"hi","metadata":{"a":1}}`, "metadata.a", "invalid_type"},
		{"metadata long value", `{"input":"hi","metadata":{"a":"` + long + `"}}`, "metadata.a", "invalid_value"},
		{"metadata long key", `{"input":"hi","metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, "metadata", "invalid_value"},
		{"metadata too many", `{"input":"hi","metadata":` + string(manyJSON) + `}`, "metadata", "invalid_value"},
		{"metadata array", `{"input":"hi","metadata":[]}`, "metadata", "invalid_type"},
		{"conversation number", `{"input":"hi","conversation":1}`, "conversation", "invalid_type"},
		{"conversation object without id", `{"input":"hi","conversation":{}}`, "conversation.id", "missing_required_parameter"},
		{"conversation vs session", `{"input":"hi","conversation":"a","session_id":"b"}`, "session_id", "invalid_value"},
		{"conversation and previous", `{"input":"hi","conversation":"a","previous_response_id":"resp_1"}`, "previous_response_id", "invalid_value"},
		{"session and previous", `{"input":"hi","session_id":"a","previous_response_id":"resp_1"}`, "previous_response_id", "invalid_value"},
		{"background without store", `{"input":"hi","background":true,"store":false}`, "background", "invalid_value"},
		{"temperature string", `{"input":"hi","temperature":"hot"}`, "temperature", "invalid_type"},
		{"max tokens float", `{"input":"hi","max_output_tokens":1.5}`, "max_output_tokens", "invalid_type"},
		{"tools object", `{"input":"hi","tools":{}}`, "tools", "invalid_type"},
		{"tools number", `{"input":"hi","tools":0}`, "tools", "invalid_type"},
		{"max tokens negative", `{"input":"hi","max_output_tokens":-5}`, "max_output_tokens", "integer_below_min_value"},
		{"max tokens zero", `{"input":"hi","max_output_tokens":0}`, "max_output_tokens", "integer_below_min_value"},
		{"max tool calls negative", `{"input":"hi","max_tool_calls":-1}`, "max_tool_calls", "integer_below_min_value"},
		{"tool_choice number", `{"input":"hi","tool_choice":1}`, "tool_choice", "invalid_type"},
		{"truncation", `{"input":"hi","truncation":"sometimes"}`, "truncation", "unsupported_value"},
		{"model_options string", `{"input":"hi","model_options":"x"}`, "model_options", "invalid_type"},
		{"control char user", `{"input":"hi","user":"a\u0001b"}`, "user", "invalid_value"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r, aerr := parseResponsesRequest([]byte(tc.body))
			if aerr == nil {
				t.Fatalf("accepted: %+v", r)
			}
			if aerr.Status != 400 || aerr.Param != tc.param || aerr.Code != tc.code {
				t.Errorf("got %d param=%q code=%q (%s); want param=%q code=%q", aerr.Status, aerr.Param, aerr.Code, aerr.Message, tc.param, tc.code)
			}
		})
	}

	good := []struct {
		name, body string
		check      func(t *testing.T, r *responsesRequest)
	}{
		{"string input", `{"model":"m","input":"hi","stream":true}`, func(t *testing.T, r *responsesRequest) {
			if r.Model != "m" || !r.Stream || !r.Store || len(r.Input) != 1 || r.Input[0].Blocks[0].Text != "hi" {
				t.Errorf("%+v", r)
			}
		}},
		{"message object", `{"input":{"role":"user","content":"hi"}}`, func(t *testing.T, r *responsesRequest) {
			if len(r.Input) != 1 || r.Input[0].Role != "user" {
				t.Errorf("%+v", r.Input)
			}
		}},
		{"ai sdk shape", `{"input":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_file","filename":"n.txt","file_data":"aGk="}]},{"type":"item_reference","id":"msg_1"},{"id":"msg_2"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"ok"}]}]}`, func(t *testing.T, r *responsesRequest) {
			if len(r.Input) != 6 || r.Input[2].RefID != "msg_1" || r.Input[3].RefID != "msg_2" || r.Input[5].Output != "ok" {
				t.Errorf("%+v", r.Input)
			}
			blocks := r.Input[1].Blocks
			if len(blocks) != 3 || blocks[2].FileData != "data:text/plain;base64,aGk=" {
				t.Errorf("blocks %+v", blocks)
			}
		}},
		{"assistant history", `{"input":[{"role":"assistant","content":[{"type":"output_text","text":"earlier"}]},{"role":"user","content":"now"}]}`, func(t *testing.T, r *responsesRequest) {
			if !strings.Contains(string(r.Input[0].Item()), `"output_text"`) {
				t.Errorf("%s", r.Input[0].Item())
			}
		}},
		{"approval response", `{"input":[{"type":"mcp_approval_response","approval_request_id":"apr_1","approve":false,"reason":"no"}]}`, func(t *testing.T, r *responsesRequest) {
			it := r.Input[0]
			if it.ApprovalID != "apr_1" || it.Approve || it.Reason != "no" {
				t.Errorf("%+v", it)
			}
		}},
		{"conversation object and same session", `{"input":"x","conversation":{"id":"c1"},"session_id":"c1"}`, func(t *testing.T, r *responsesRequest) {
			if r.SessionID != "c1" || r.Conversation != "c1" {
				t.Errorf("%+v", r)
			}
		}},
		{"legacy session", `{"input":"x","session_id":"s1"}`, func(t *testing.T, r *responsesRequest) {
			if r.SessionID != "s1" || r.Conversation != "" {
				t.Errorf("%+v", r)
			}
		}},
		{"nulls are absent", `{"input":"x","metadata":null,"instructions":null,"temperature":null,"stream":null}`, func(t *testing.T, r *responsesRequest) {
			if r.Instructions != nil || r.Temperature != nil || r.Stream {
				t.Errorf("%+v", r)
			}
		}},
		{"ignored fields", `{"input":"x","include":["reasoning.encrypted_content"],"stream_options":{"include_obfuscation":false},"service_tier":"auto","store":false}`, func(t *testing.T, r *responsesRequest) {
			if r.Store {
				t.Errorf("store")
			}
		}},
		{"fco verdict", `{"input":[{"type":"function_call_output","call_id":"c","output":"{\"approve\":false,\"reason\":\"nope\"}"}]}`, func(t *testing.T, r *responsesRequest) {
			if it := r.Input[0]; it.Approve || it.Reason != "nope" {
				t.Errorf("%+v", it)
			}
		}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			r, aerr := parseResponsesRequest([]byte(tc.body))
			if aerr != nil {
				t.Fatal(aerr)
			}
			tc.check(t, r)
		})
	}
}

func TestParseChatRequest(t *testing.T) {
	bad := []struct{ name, body, param, code string }{
		{"no messages", `{"model":"m"}`, "messages", "missing_required_parameter"},
		{"empty messages", `{"messages":[]}`, "messages", "invalid_value"},
		{"messages object", `{"messages":{}}`, "messages", "invalid_type"},
		{"bad role", `{"messages":[{"role":"bot","content":"x"}]}`, "messages[0].role", "unsupported_value"},
		{"function role", `{"messages":[{"role":"function","content":"x"}]}`, "messages[0].role", "unsupported_value"},
		{"tool without id", `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", "missing_required_parameter"},
		{"user without content", `{"messages":[{"role":"user"}]}`, "messages[0].content", "missing_required_parameter"},
		{"audio part", `{"messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "messages[0].content[0].type", "unsupported_value"},
		{"image without url", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].image_url.url", "missing_required_parameter"},
		{"stream string", `{"messages":[{"role":"user","content":"x"}],"stream":"yes"}`, "stream", "invalid_type"},
		{"n=2", `{"messages":[{"role":"user","content":"x"}],"n":2}`, "n", "unsupported_value"},
		{"include_usage string", `{"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":"y"}}`, "stream_options.include_usage", "invalid_type"},
		{"tool call without function", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c"}]}]}`, "messages[0].tool_calls[0].function", "missing_required_parameter"},
		{"temperature string", `{"messages":[{"role":"user","content":"x"}],"temperature":"x"}`, "temperature", "invalid_type"},
		{"max_tokens negative", `{"messages":[{"role":"user","content":"x"}],"max_tokens":-5}`, "max_tokens", "integer_below_min_value"},
		{"max_completion_tokens zero", `{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":0}`, "max_completion_tokens", "integer_below_min_value"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, aerr := parseChatRequest([]byte(tc.body))
			if aerr == nil {
				t.Fatal("accepted")
			}
			if aerr.Param != tc.param || aerr.Code != tc.code {
				t.Errorf("param=%q code=%q (%s); want %q %q", aerr.Param, aerr.Code, aerr.Message, tc.param, tc.code)
			}
		})
	}
	r, aerr := parseChatRequest([]byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"session_id":"s",
		"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"http://x/y.png","detail":"low"}},{"type":"file","file":{"filename":"a.pdf","file_data":"AAA="}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"result"}]}`))
	if aerr != nil {
		t.Fatal(aerr)
	}
	if !r.Stream || !r.IncludeUsage || r.SessionID != "s" || len(r.Messages) != 4 {
		t.Fatalf("%+v", r)
	}
	u := r.Messages[1].Blocks
	if len(u) != 3 || u[1].Type != "input_image" || u[1].ImageURL != "http://x/y.png" || u[2].FileData != "data:application/pdf;base64,AAA=" {
		t.Errorf("blocks %+v", u)
	}
	if r.Messages[2].ToolCalls[0].Function.Name != "f" || r.Messages[3].ToolCallID != "call_1" {
		t.Errorf("%+v", r.Messages)
	}
}

// The parsers must never panic and must return a request or a 4xx error.
func FuzzParseResponsesRequest(f *testing.F) {
	for _, s := range []string{`{"input":"hi"}`, `{"input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}]}`,
		`{"input":{"type":"mcp_approval_response","approval_request_id":"a","approve":true}}`, `{"input":[{"id":"x"}],"metadata":{"a":"b"},"conversation":{"id":"c"}}`,
		`{"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"t"}]}],"tools":[],"temperature":1}`, `[]`, `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, aerr := parseResponsesRequest(body)
		if (r == nil) == (aerr == nil) {
			t.Fatalf("request %v error %v", r, aerr)
		}
		if aerr != nil && (aerr.Status < 400 || aerr.Status > 499 || aerr.Message == "") {
			t.Fatalf("bad error %+v", aerr)
		}
		if r != nil && len(r.Input) == 0 {
			t.Fatalf("accepted a request without input")
		}
	})
}

func FuzzParseChatRequest(f *testing.F) {
	for _, s := range []string{`{"messages":[{"role":"user","content":"hi"}]}`, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"x"}]}`, `{}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, aerr := parseChatRequest(body)
		if (r == nil) == (aerr == nil) {
			t.Fatalf("request %v error %v", r, aerr)
		}
		if aerr != nil && (aerr.Status < 400 || aerr.Status > 499 || aerr.Message == "") {
			t.Fatalf("bad error %+v", aerr)
		}
		if r != nil {
			for _, m := range r.Messages {
				_ = m.items()
			}
		}
	})
}
