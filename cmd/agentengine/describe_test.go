package main

import (
	"encoding/json"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func TestDescribeEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   session.Event
		want string
	}{
		{"tool call", session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"call_id":"c1","name":"search","arguments":"{\"q\":1}"}`)},
			`search({"q":1}) [c1]`},
		{"run failed", session.Event{Type: session.TypeRunStatus, InvocationID: "run_1", Data: json.RawMessage(`{"status":"failed","error":{"code":"x","message":"boom"}}`)},
			"failed (run run_1): boom"},
		{"damaged data is shown raw", session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"name":7}`)},
			`(undecodable data) {"name":7}`},
		{"unknown type", session.Event{Type: "custom", Data: json.RawMessage(`{"a":1}`)}, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeEvent(tt.ev); got != tt.want {
				t.Errorf("describeEvent = %q, want %q", got, tt.want)
			}
		})
	}
}
