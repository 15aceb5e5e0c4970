package actions_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

func TestListSessionEvents(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	evs := e.events(run.SessionID)
	want := []string{"user_message", "run_status", "reasoning", "assistant_message", "run_status"}
	if !reflect.DeepEqual(types(evs), want) {
		t.Fatalf("types %v, want %v", types(evs), want)
	}
	for i, ev := range evs {
		if ev.SeqId != int64(i+1) || ev.SessionId != run.SessionID || ev.EventId != fmt.Sprintf("%s#%d", run.SessionID, i+1) ||
			ev.InvocationId == "" || ev.Timestamp == 0 || ev.Author == "" {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	if evs[0].text() != "hello there" || evs[0].Author != "user" {
		t.Errorf("user message %s", evs[0].Content)
	}
	if evs[1].status() != "in_progress" || evs[4].status() != "completed" {
		t.Errorf("run statuses %s %s", evs[1].Content, evs[4].Content)
	}
	if evs[3].text() != "Echo: hello there" || evs[3].Metadata["item_id"] == nil {
		t.Errorf("assistant message %s %v", evs[3].Content, evs[3].Metadata)
	}
	if _, ok := evs[4].Metadata["usage"]; !ok {
		t.Errorf("terminal status metadata %v", evs[4].Metadata)
	}

	seqs := func(evs []eventRow) []int64 {
		out := []int64{}
		for _, ev := range evs {
			out = append(out, ev.SeqId)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		seqs  []int64
		total int64
		more  bool
	}{
		{"newest N", map[string]any{"Limit": 2}, []int64{4, 5}, 5, true},
		{"offset from the newest", map[string]any{"Limit": 2, "Offset": 1}, []int64{3, 4}, 5, true},
		{"after", map[string]any{"AfterSeqId": 2}, []int64{3, 4, 5}, 3, false},
		{"before", map[string]any{"BeforeSeqId": 3}, []int64{1, 2}, 2, false},
		{"window", map[string]any{"AfterSeqId": 1, "BeforeSeqId": 5, "Limit": 2}, []int64{3, 4}, 3, true},
		{"past the end", map[string]any{"AfterSeqId": 9}, []int64{}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["SessionId"] = run.SessionID
			var d struct {
				Events      []eventRow
				Total       int64
				HasMore     bool
				LatestSeqId int64
			}
			e.must("ListSessionEvents", tc.body, &d)
			if !reflect.DeepEqual(seqs(d.Events), tc.seqs) || d.Total != tc.total || d.HasMore != tc.more || d.LatestSeqId != 5 {
				t.Errorf("seqs %v total %d more %v latest %d; want %v %d %v", seqs(d.Events), d.Total, d.HasMore, d.LatestSeqId, tc.seqs, tc.total, tc.more)
			}
		})
	}

	for _, tc := range []struct {
		body     map[string]any
		status   int
		code     string
		mentions string
	}{
		{map[string]any{}, 400, actions.CodeMissingParameter, "SessionId"},
		{map[string]any{"SessionId": run.SessionID, "Limit": 0}, 400, actions.CodeInvalidParameter, "Limit"},
		{map[string]any{"SessionId": run.SessionID, "Limit": 2001}, 400, actions.CodeInvalidParameter, "Limit"},
		{map[string]any{"SessionId": run.SessionID, "Offset": -1}, 400, actions.CodeInvalidParameter, "Offset"},
		{map[string]any{"SessionId": run.SessionID, "AfterSeqId": -1}, 400, actions.CodeInvalidParameter, "AfterSeqId"},
		{map[string]any{"SessionId": run.SessionID, "BeforeSeqId": "3"}, 400, actions.CodeInvalidParameter, "BeforeSeqId"},
		{map[string]any{"SessionId": run.SessionID, "UserId": "mallory"}, 404, actions.CodeNotFound, ""},
		{map[string]any{"SessionId": "nope"}, 404, actions.CodeNotFound, "nope"},
	} {
		wantError(t, e.post("ListSessionEvents", tc.body), tc.status, tc.code, tc.mentions)
	}
}

func TestEventPayloadsOfTools(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("use the tool on paris")})
	evs := e.events(run.SessionID)
	var call, result *eventRow
	for i := range evs {
		switch evs[i].EventType {
		case "tool_call":
			call = &evs[i]
		case "tool_result":
			result = &evs[i]
		}
	}
	if call == nil || result == nil {
		t.Fatalf("no tool events in %v", types(evs))
	}
	// KsADK's keys, with JSON arguments and outputs as JSON.
	args, _ := json.Marshal(call.Metadata["tool_args"])
	if call.Metadata["tool_name"] != "lookup" || string(args) != `{"query":"paris"}` || call.Metadata["tool_call_id"] == "" {
		t.Errorf("tool_call metadata %v", call.Metadata)
	}
	out, _ := result.Metadata["tool_output"].(map[string]any)
	if result.Metadata["tool_name"] != "lookup" || out["query"] != "paris" || result.Metadata["call_id"] != call.Metadata["call_id"] {
		t.Errorf("tool_result metadata %v", result.Metadata)
	}
}
