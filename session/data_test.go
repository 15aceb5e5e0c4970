package session_test

import (
	"encoding/json"
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
