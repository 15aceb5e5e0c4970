package pluginsdk_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/wire"
)

var update = flag.Bool("update", false, "rewrite the golden payload fixtures in testdata")

// The payload and session context the host sends, with every field set, as golden JSON
// fixtures. The Python SDK's tests read them (pluginsdk/python/tests/test_payload_contract.py)
// and fail when Python code reads a field these documents do not have.
func fullRequest() (pluginsdk.Payload, pluginsdk.SessionContext) {
	history := []pluginsdk.Message{
		{Role: "user", Content: "look at this", Type: session.TypeUserMessage, Seq: 1,
			Blocks: []pluginsdk.ContentBlock{{Type: "input_image", ImageURL: "data:image/png;base64,AAAA", Filename: "a.png"}}},
		{Role: "assistant", Type: session.TypeToolCall, Seq: 3, CallID: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`},
		{Role: "user", Content: `{"temp": 21}`, Type: session.TypeToolResult, Seq: 4, CallID: "call_1", Name: "weather", Output: json.RawMessage(`{"temp": 21}`)},
		{Role: "assistant", Content: "It is 21 degrees.", Type: session.TypeAssistantMessage, Seq: 5},
	}
	resume := pluginsdk.Resume{ApprovalRequestID: "apr_1", Approve: false, Reason: "not now", Output: "", CallID: "call_2",
		Name: "deploy", Arguments: `{"target":"prod"}`, Detail: json.RawMessage(`{"interrupt_id":"i1","thread_id":"t1"}`)}
	output := pluginsdk.Resume{ApprovalRequestID: "apr_2", Approve: true, Output: `{"ok":true}`, CallID: "call_3", Name: "ask_user",
		Arguments: `{}`, Detail: json.RawMessage(`{}`)}
	item := json.RawMessage(`{"type":"function_call_output","call_id":"call_0","output":"earlier"}`)
	file := json.RawMessage(`{"file_uri":"ksadk-upload://u/1","name":"notes.txt","mime_type":"text/plain"}`)
	result := json.RawMessage(`{"file_uri":"ksadk-upload://u/1","name":"notes.txt","mime_type":"text/plain","kind":"text","status":"ok","extraction_method":"text","text":"hello","text_excerpt":"hello","warnings":[]}`)
	p := pluginsdk.Payload{
		Input:   json.RawMessage(`[{"type":"mcp_approval_response","approval_request_id":"apr_1","approve":false,"reason":"not now"},{"type":"function_call_output","call_id":"call_3","output":"{\"ok\":true}"}]`),
		History: history,
		InputContent: []pluginsdk.ContentBlock{{Type: "input_text", Text: "deploy it"},
			{Type: "input_image", ImageURL: "data:image/png;base64,AAAA", Filename: "a.png"}},
		InputItems:    []json.RawMessage{item},
		InputMessages: []json.RawMessage{item, json.RawMessage(`{"content":[{"type":"input_text","text":"deploy it"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","filename":"a.png"}],"role":"user","type":"message"}`)},
		InputParts: []json.RawMessage{json.RawMessage(`{"text":"deploy it"}`),
			json.RawMessage(`{"inline_data":{"data":"AAAA","display_name":"a.png","mime_type":"image/png"}}`)},
		Attachments:              []json.RawMessage{file},
		AttachmentResults:        []json.RawMessage{result},
		CurrentAttachments:       []json.RawMessage{file},
		CurrentAttachmentResults: []json.RawMessage{result},
		HasCurrentFiles:          true,
		Model:                    "assistant",
		ModelMetadata:            json.RawMessage(`{"provider":"openai"}`),
		ModelOptions:             json.RawMessage(`{"temperature":0.2}`),
		Instructions:             "Be brief.",
		ToolApprovalMode:         "ask",
		Metadata:                 map[string]string{"k": "v"},
		SessionID:                "sess_1",
		InvocationID:             "run_1",
		Resume:                   &resume,
		Resumes:                  []pluginsdk.Resume{resume, output},
		ContinueFrom:             &pluginsdk.CheckpointRef{ThreadID: "2:u1/sess_1/run:run_0", CheckpointID: "1f0a"},
	}
	sc := pluginsdk.SessionContext{
		History: history,
		PlatformContext: pluginsdk.PlatformContext{AgentID: "assistant", AppName: "assistant", UserID: "u1", AccountID: "acct_1",
			SessionID: "sess_1", InvocationID: "run_1"},
		KBContext:     json.RawMessage(`null`),
		MemoryContext: json.RawMessage(`null`),
		IsResume:      true,
		State:         map[string]any{"color": "red", "theme": "dark"},
		StateTiers:    pluginsdk.State{App: map[string]any{"theme": "dark"}, User: map[string]any{}, Session: map[string]any{"color": "red"}},
	}
	return p, sc
}

func TestPayloadFixtures(t *testing.T) {
	p, sc := fullRequest()
	// Every field is set, so a field added to the types shows in the fixtures.
	for _, v := range []any{p, sc, sc.PlatformContext, *p.Resume} {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if rv.Field(i).IsZero() && f.Name != "Approve" && f.Name != "Output" {
				t.Errorf("%s.%s is not set in the fixture", rv.Type().Name(), f.Name)
			}
		}
	}
	// What the host sends a runner that expands payloads leaves the derived fields out;
	// expanding it gives the full documents back (the Python SDK's tests check their
	// expansion against the same fixtures).
	cp, csc := p, sc
	cp.InputMessages, cp.InputParts, csc.History = nil, nil, nil
	ep, esc := cp, csc
	wire.Expand(&ep, &esc)
	if !reflect.DeepEqual(ep, p) || !reflect.DeepEqual(esc, sc) {
		t.Errorf("expanded compact request differs from the full one:\n%+v\n%+v", ep, p)
	}
	for name, v := range map[string]any{"payload.json": p, "session_context.json": sc,
		"payload_compact.json": cp, "session_context_compact.json": csc} {
		got, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", name), append(got, '\n'), *update, "./pluginsdk -run TestPayloadFixtures")
	}
}
