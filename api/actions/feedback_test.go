package actions_test

import (
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

type feedbackRow struct {
	AgentId, SessionId, ResponseId, EventId, Rating, Comment, TraceId, RootSpanId string
	CreatedAt, UpdatedAt                                                          float64
}

type feedbackData struct {
	Feedback *feedbackRow
}

func TestResponseFeedback(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	msgs := e.messages(map[string]any{"SessionId": run.SessionID})
	answer := msgs.Messages[1]
	if answer.ResponseId != run.ID {
		t.Fatalf("message response id %q, want %q", answer.ResponseId, run.ID)
	}
	ref := map[string]any{"AgentId": "echo", "SessionId": run.SessionID, "ResponseId": run.ID}
	var d feedbackData
	e.must("GetResponseFeedback", ref, &d)
	if d.Feedback != nil {
		t.Fatalf("feedback before any: %+v", d.Feedback)
	}

	up := map[string]any{"AgentId": "echo", "SessionId": run.SessionID, "ResponseId": run.ID, "EventId": answer.MessageId, "Rating": "up"}
	e.must("UpsertResponseFeedback", up, &d)
	f := d.Feedback
	if f == nil || f.Rating != "up" || f.EventId != answer.MessageId || f.ResponseId != run.ID || f.SessionId != run.SessionID || f.CreatedAt == 0 {
		t.Fatalf("upserted %+v", f)
	}
	created := f.CreatedAt
	up["Rating"], up["Comment"] = "DOWN", "too terse"
	e.must("UpsertResponseFeedback", up, &d)
	if d.Feedback.Rating != "down" || d.Feedback.Comment != "too terse" || d.Feedback.CreatedAt != created || d.Feedback.UpdatedAt < created {
		t.Errorf("updated %+v", d.Feedback)
	}
	e.must("GetResponseFeedback", ref, &d)
	if d.Feedback == nil || d.Feedback.Rating != "down" || d.Feedback.CreatedAt != created {
		t.Errorf("read back %+v", d.Feedback)
	}
	// The invocation id names the same response.
	inv := e.invocation(run.SessionID, "user")
	e.must("GetResponseFeedback", map[string]any{"SessionId": run.SessionID, "ResponseId": inv}, &d)
	if d.Feedback == nil || d.Feedback.Rating != "down" {
		t.Errorf("by invocation id %+v", d.Feedback)
	}
	// Feedback is a stored event of the session.
	evs := e.events(run.SessionID)
	if n := strings.Count(strings.Join(types(evs), " "), "feedback"); n != 2 {
		t.Errorf("%d feedback events in %v", n, types(evs))
	}

	var del struct{ Deleted bool }
	e.must("DeleteResponseFeedback", ref, &del)
	if !del.Deleted {
		t.Error("not deleted")
	}
	e.must("GetResponseFeedback", ref, &d)
	if d.Feedback != nil {
		t.Errorf("after delete %+v", d.Feedback)
	}
	// Deleting again, or deleting what never existed, is not an error and writes nothing.
	before := len(e.events(run.SessionID))
	for _, body := range []map[string]any{ref,
		{"SessionId": run.SessionID, "ResponseId": "resp_unknown"},
		{"SessionId": "nope", "ResponseId": run.ID},
		{"SessionId": run.SessionID, "ResponseId": run.ID, "UserId": "mallory"},
	} {
		e.must("DeleteResponseFeedback", body, &del)
		if del.Deleted {
			t.Errorf("%v deleted something", body)
		}
	}
	if after := len(e.events(run.SessionID)); after != before {
		t.Errorf("no-op deletes appended %d events", after-before)
	}
	// Feedback after a delete starts afresh.
	e.must("UpsertResponseFeedback", up, &d)
	if d.Feedback.CreatedAt == created {
		t.Error("feedback after a delete kept the old CreatedAt")
	}
}

func TestResponseFeedbackRejections(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	other := e.run(map[string]any{"Messages": userMessages("another session")})
	failed := e.run(map[string]any{"SessionId": run.SessionID, "Messages": userMessages("fail")})
	base := func(kv ...any) map[string]any {
		m := map[string]any{"SessionId": run.SessionID, "ResponseId": run.ID, "Rating": "up"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	before := e.snapshot()
	for _, tc := range []struct {
		name     string
		body     map[string]any
		status   int
		code     string
		mentions string
	}{
		{"bad rating", base("Rating", "meh"), 400, actions.CodeInvalidParameter, "up or down"},
		{"no rating", base("Rating", nil), 400, actions.CodeMissingParameter, "Rating"},
		{"rating not a string", base("Rating", true), 400, actions.CodeInvalidParameter, "Rating"},
		{"no response", base("ResponseId", nil), 400, actions.CodeMissingParameter, "ResponseId"},
		{"no session", base("SessionId", nil), 400, actions.CodeMissingParameter, "SessionId"},
		{"long comment", base("Comment", strings.Repeat("c", 4001)), 400, actions.CodeInvalidParameter, "Comment"},
		{"unknown response", base("ResponseId", "resp_nope"), 404, actions.CodeNotFound, "resp_nope"},
		{"response of another session", base("ResponseId", other.ID), 404, actions.CodeNotFound, ""},
		{"response without an answer", base("ResponseId", failed.ID), 404, actions.CodeNotFound, ""},
		{"not an assistant message", base("EventId", run.SessionID+"#1"), 404, actions.CodeNotFound, "EventId"},
		{"another user's session", base("UserId", "mallory"), 404, actions.CodeNotFound, ""},
		{"unknown session", base("SessionId", "nope"), 404, actions.CodeNotFound, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post("UpsertResponseFeedback", tc.body), tc.status, tc.code, tc.mentions)
		})
	}
	if after := e.snapshot(); after != before {
		t.Errorf("rejected feedback changed the store: %s -> %s", before, after)
	}
	wantError(t, e.post("GetResponseFeedback", map[string]any{"SessionId": "nope", "ResponseId": run.ID}), 404, actions.CodeNotFound)
	wantError(t, e.post("GetResponseFeedback", map[string]any{"SessionId": run.SessionID}), 400, actions.CodeMissingParameter, "ResponseId")
	var d feedbackData
	e.must("GetResponseFeedback", map[string]any{"SessionId": run.SessionID, "ResponseId": "resp_nope"}, &d)
	if d.Feedback != nil {
		t.Errorf("unknown response has feedback %+v", d.Feedback)
	}
}
