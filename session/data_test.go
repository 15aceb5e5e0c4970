package session_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func TestDataOf(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    session.ToolCallData
		wantErr string
	}{
		{name: "decodes", data: `{"call_id":"c1","name":"search","arguments":"{}"}`,
			want: session.ToolCallData{CallID: "c1", Name: "search", Arguments: "{}"}},
		{name: "empty", data: "", wantErr: "tool_call event (seq 7) has no data"},
		{name: "wrong shape", data: `{"call_id":1}`, wantErr: "decoding the data of tool_call event (seq 7)"},
		{name: "not json", data: `{`, wantErr: "decoding the data of tool_call event (seq 7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := session.Event{Seq: 7, Type: session.TypeToolCall, Data: json.RawMessage(tt.data)}
			got, err := session.DataOf[session.ToolCallData](e)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestUserMessageDataStoresTextOnlyContentOnce(t *testing.T) {
	image := session.ContentBlock{Type: "input_image", ImageURL: "data:image/png;base64,AA=="}
	for _, tc := range []struct {
		name        string
		text        string
		content     []session.ContentBlock
		wantContent int
		wantBlocks  []session.ContentBlock
	}{
		{"text only", "hi", []session.ContentBlock{{Type: "input_text", Text: "hi"}}, 0, []session.ContentBlock{{Type: "input_text", Text: "hi"}}},
		{"text and image", "hi", []session.ContentBlock{{Type: "input_text", Text: "hi"}, image}, 2, []session.ContentBlock{{Type: "input_text", Text: "hi"}, image}},
		{"image only", "", []session.ContentBlock{image}, 1, []session.ContentBlock{image}},
		{"two text blocks", "ab", []session.ContentBlock{{Type: "input_text", Text: "a"}, {Type: "input_text", Text: "b"}}, 2, []session.ContentBlock{{Type: "input_text", Text: "a"}, {Type: "input_text", Text: "b"}}},
		{"nothing", "", nil, 0, nil},
	} {
		d := session.NewUserMessageData(tc.text, tc.content)
		var back session.UserMessageData
		if err := json.Unmarshal(session.MustJSON(d), &back); err != nil {
			t.Fatal(err)
		}
		if len(back.Content) != tc.wantContent || !reflect.DeepEqual(back.Blocks(), tc.wantBlocks) || back.Text != tc.text {
			t.Errorf("%s: stored %+v, blocks %+v", tc.name, back, back.Blocks())
		}
	}
}
