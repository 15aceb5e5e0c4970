package ksadkimport_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/ksadkimport"
)

// recorded is a session file KsADK 0.8.5 wrote itself (three turns of one conversation, the
// third running a tool); the SQLite store's migration imports the same file.
const recorded = "../sqlite/testdata/ksadk-0.8.5/sessions.sqlite"

func readRecorded(t *testing.T) (ksadkimport.Session, []ksadkimport.SourceEvent) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+recorded+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s ksadkimport.Session
	if err := db.QueryRow(`SELECT id, agent_id, user_id, title, title_source, first_prompt, last_prompt, state_json, created_at, updated_at
		FROM ksadk_sessions`).Scan(&s.ID, &s.Agent, &s.User, &s.Title, &s.TitleSource, &s.FirstPrompt, &s.LastPrompt, &s.State, &s.Created, &s.Updated); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT author, event_type, content_json, invocation_id, metadata_json, seq_id, timestamp
		FROM ksadk_events WHERE session_id = ? ORDER BY seq_id, timestamp, rowid`, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var evs []ksadkimport.SourceEvent
	for rows.Next() {
		var e ksadkimport.SourceEvent
		if err := rows.Scan(&e.Author, &e.Type, &e.Content, &e.Invocation, &e.Metadata, &e.Seq, &e.Time); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s, evs
}

func TestConvertRecordedKsADKSession(t *testing.T) {
	s, evs := readRecorded(t)
	conv := ksadkimport.Convert(evs, s.Created)

	var types []string
	for _, e := range conv.Events {
		types = append(types, e.Type)
	}
	want := "user_message,run_status,assistant_message,run_status,user_message,run_status,assistant_message,run_status," +
		"user_message,run_status,tool_call,tool_result,assistant_message,run_status"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("converted %d KsADK events to\n%s\nwant\n%s", len(evs), got, want)
	}
	if len(conv.Invocations) != 3 {
		t.Fatalf("invocations %v, want the three turns", conv.Invocations)
	}
	for _, inv := range conv.Invocations {
		if conv.RunStatus[inv] != session.StatusCompleted {
			t.Fatalf("run %s: status %q", inv, conv.RunStatus[inv])
		}
		if rt := conv.RunTimes[inv]; rt[0] <= 0 || rt[1] < rt[0] {
			t.Fatalf("run %s: times %v", inv, rt)
		}
	}
	if conv.LastInvocation != conv.Invocations[2] {
		t.Fatalf("last invocation %q, want %q", conv.LastInvocation, conv.Invocations[2])
	}
	for i := 1; i < len(conv.Events); i++ {
		if conv.Events[i].Time < conv.Events[i-1].Time {
			t.Fatalf("event %d is older than the one before it", i)
		}
	}
	var call session.ToolCallData
	var result session.ToolResultData
	if err := json.Unmarshal(conv.Events[10].Data, &call); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(conv.Events[11].Data, &result); err != nil {
		t.Fatal(err)
	}
	if call.Name != "lookup" || call.CallID == "" || result.CallID != call.CallID || result.Name != "lookup" || result.Output != "paris has 5 letters" {
		t.Fatalf("tool call %+v and result %+v", call, result)
	}
	var answer session.AssistantMessageData
	if err := json.Unmarshal(conv.Events[2].Data, &answer); err != nil || answer.Text != "Echo: hello there (history: 0 messages)" {
		t.Fatalf("first answer %+v (%v)", answer, err)
	}
}

func TestConvertEndsUnfinishedRunsInterrupted(t *testing.T) {
	conv := ksadkimport.Convert([]ksadkimport.SourceEvent{
		{Author: "user", Type: session.TypeUserMessage, Content: `{"parts":[{"text":"hi"}]}`, Invocation: "r1", Seq: 1, Time: 10},
		{Author: "bot", Type: session.TypeRunStatus, Content: `{"status":"running"}`, Invocation: "r1", Seq: 2, Time: 9},
	}, 5)
	if n := len(conv.Events); n != 3 || conv.Events[2].Type != session.TypeRunStatus || conv.RunStatus["r1"] != session.StatusInterrupted {
		t.Fatalf("events %+v, status %q", conv.Events, conv.RunStatus["r1"])
	}
	if conv.Events[1].Time < conv.Events[0].Time {
		t.Fatal("an event's time went back: seq order must win over KsADK's clock")
	}
}

func TestState(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"active_run":{"status":"in_progress"},"city":"Paris","temp:x":1}`, `{"city":"Paris"}`},
		{`not json`, `{}`},
		{``, `{}`},
		{`null`, `{}`},
	} {
		if got := ksadkimport.State(tc.in); got != tc.want {
			t.Errorf("State(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRenamed(t *testing.T) {
	for src, want := range map[string]bool{"user": true, "manual": true, "rename": true, "auto": false, "": false} {
		if ksadkimport.Renamed(src) != want {
			t.Errorf("Renamed(%q) = %v", src, !want)
		}
	}
}
