package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

// toolOutput is a JSON tool output whose text contains ": ", the separator the display
// text uses: runners must read Output, never cut Content apart.
const toolOutput = `{"temp": 21, "note": "a: b"}`

func storedToolTurn(t *testing.T) []session.Event {
	t.Helper()
	return []session.Event{
		{Seq: 1, Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: "weather?"})},
		{Seq: 2, Type: session.TypeToolCall, Data: session.MustJSON(session.ToolCallData{CallID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`})},
		{Seq: 3, Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: "c1", Name: "get_weather", Output: toolOutput})},
	}
}

func clientToolTurn(t *testing.T, output string) []session.Event {
	t.Helper()
	items := []json.RawMessage{
		json.RawMessage(`{"type":"message","role":"user","content":"weather?"}`),
		json.RawMessage(`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}`),
		json.RawMessage(`{"type":"function_call_output","call_id":"c1","output":` + output + `}`),
	}
	return []session.Event{{Seq: 1, Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Items: items})}}
}

type toolFields struct {
	Type, CallID, Name, Output string
}

func toolMessages(msgs []session.Message) []toolFields {
	var out []toolFields
	for _, m := range msgs {
		if m.Type == session.TypeToolCall || m.Type == session.TypeToolResult {
			out = append(out, toolFields{m.Type, m.CallID, m.Name, string(m.Output)})
		}
	}
	return out
}

func TestToolResultOutputIsStructured(t *testing.T) {
	quoted, _ := json.Marshal(toolOutput)
	want := []toolFields{
		{session.TypeToolCall, "c1", "get_weather", ""},
		{session.TypeToolResult, "c1", "get_weather", string(quoted)},
	}
	tests := []struct {
		name   string
		events []session.Event
	}{
		{"stored tool result", storedToolTurn(t)},
		{"client function_call_output", clientToolTurn(t, string(quoted))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolMessages(session.Project(tt.events))
			if len(got) != len(want) {
				t.Fatalf("tool messages = %+v, want %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("message %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			// The output decodes to exactly what the tool produced.
			var text string
			if err := json.Unmarshal([]byte(got[1].Output), &text); err != nil || text != toolOutput {
				t.Errorf("output %s decodes to %q (%v), want %q", got[1].Output, text, err, toolOutput)
			}
		})
	}
}

func TestClientOutputKeepsItsJSONShape(t *testing.T) {
	tests := []struct{ name, output, want string }{
		{"object", `{"temp":21,"note":"a: b"}`, `{"temp":21,"note":"a: b"}`},
		{"parts", `[{"type":"input_text","text":"sunny"}]`, `[{"type":"input_text","text":"sunny"}]`},
		{"string", `"sunny"`, `"sunny"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolMessages(session.Project(clientToolTurn(t, tt.output)))
			if len(got) != 2 || got[1].Output != tt.want || got[1].Name != "get_weather" {
				t.Fatalf("tool messages = %+v, want output %s named get_weather", got, tt.want)
			}
		})
	}
}

func TestItemMessagesNameResultsOfTheirCalls(t *testing.T) {
	var d session.UserMessageData
	if err := json.Unmarshal(clientToolTurn(t, `"sunny"`)[0].Data, &d); err != nil {
		t.Fatal(err)
	}
	msgs := session.ItemMessages(d.Items, 7)
	got := toolMessages(msgs)
	if len(got) != 2 || got[1].Name != "get_weather" || got[1].Output != `"sunny"` {
		t.Fatalf("tool messages = %+v", got)
	}
	if msgs[2].Content != "[tool_result] sunny" {
		t.Errorf("display content = %q", msgs[2].Content)
	}
}

// A result that names no tool gets its call's name, also when the call came in an earlier
// batch (a history projected a turn at a time); a result that names its tool keeps it.
func TestToolNamesCarryAcrossBatches(t *testing.T) {
	names := session.ToolNames{}
	first := []session.Message{
		{Type: session.TypeToolCall, CallID: "c1", Name: "lookup"},
		{Type: session.TypeToolResult, CallID: "c1"},
	}
	names.Name(first)
	second := []session.Message{
		{Type: session.TypeToolResult, CallID: "c1"},
		{Type: session.TypeToolResult, CallID: "c1", Name: "own"},
		{Type: session.TypeToolResult, CallID: "unknown"},
		{Type: session.TypeToolResult},
	}
	names.Name(second)
	for i, want := range []string{"lookup", "lookup", "own", "", ""} {
		got := append(first[1:], second...)[i].Name
		if got != want {
			t.Errorf("result %d named %q, want %q", i, got, want)
		}
	}
}

// An item_deleted event takes the parts it names out of history: whole events, and
// single items a user_message carried along.
func TestProjectLeavesOutDeletedItems(t *testing.T) {
	items := []json.RawMessage{
		json.RawMessage(`{"type":"message","role":"user","content":"earlier one"}`),
		json.RawMessage(`{"type":"message","role":"assistant","content":"earlier two"}`),
	}
	base := []session.Event{
		{Seq: 1, Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: "now", Items: items})},
		{Seq: 2, Type: session.TypeAssistantMessage, Data: session.MustJSON(session.AssistantMessageData{Text: "answer"})},
	}
	del := func(parts ...session.ItemPart) session.Event {
		return session.Event{Seq: 3, Type: session.TypeItemDeleted, Data: session.MustJSON(session.ItemDeletedData{ItemID: "x", Parts: parts})}
	}
	for _, c := range []struct {
		name string
		del  []session.Event
		want string
	}{
		{"nothing deleted", nil, "earlier one|earlier two|now|answer"},
		{"a carried item", []session.Event{del(session.ItemPart{Seq: 1, Index: 1})}, "earlier one|now|answer"},
		{"the message, not its items", []session.Event{del(session.ItemPart{Seq: 1, Index: -1})}, "earlier one|earlier two|answer"},
		{"an event", []session.Event{del(session.ItemPart{Seq: 2, Index: -1})}, "earlier one|earlier two|now"},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs := append(append([]session.Event{}, base...), c.del...)
			var got []string
			for _, m := range session.Project(evs) {
				got = append(got, m.Content)
			}
			if s := strings.Join(got, "|"); s != c.want {
				t.Errorf("history %q, want %q", s, c.want)
			}
			if session.HasDeletion(evs) != (len(c.del) > 0) {
				t.Errorf("HasDeletion wrong")
			}
		})
	}
}
