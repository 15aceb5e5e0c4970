package actions_test

import (
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

type cancelData struct {
	Cancelled, Found                bool
	Status, RunStatus, InvocationId string
}

func TestCancelRun(t *testing.T) {
	e := newEnv(t)
	var bg struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("long answer"), "ModelOptions": slow(500, 20)}, &bg)
	ref := map[string]any{"SessionId": bg.SessionId, "InvocationId": bg.InvocationId}

	// Another user cannot touch it.
	wantError(t, e.post("CancelRun", map[string]any{"SessionId": bg.SessionId, "InvocationId": bg.InvocationId, "UserId": "mallory"}), 404, actions.CodeNotFound)
	if run, ok := e.rt.LiveRun(sessionKey(bg.SessionId), bg.InvocationId); !ok || run.Status() != "in_progress" {
		t.Fatal("the run did not survive another user's cancel")
	}

	var d cancelData
	e.must("CancelRun", ref, &d)
	if !d.Cancelled || !d.Found || d.Status != "cancelling" || d.RunStatus != "cancelled" || d.InvocationId != bg.InvocationId {
		t.Errorf("cancel %+v", d)
	}
	evs := e.events(bg.SessionId)
	if last := evs[len(evs)-1]; last.EventType != "run_status" || last.status() != "cancelled" {
		t.Errorf("last event %+v", last)
	}
	// Again: the run is found, finished.
	e.must("CancelRun", ref, &d)
	if d.Cancelled || !d.Found || d.Status != "finished" || d.RunStatus != "cancelled" {
		t.Errorf("second cancel %+v", d)
	}
	e.must("CancelRun", map[string]any{"SessionId": bg.SessionId, "InvocationId": "run_unknown"}, &d)
	if d.Cancelled || d.Found || d.Status != "not_found" {
		t.Errorf("unknown invocation %+v", d)
	}
	for _, tc := range []struct {
		body     map[string]any
		status   int
		code     string
		mentions string
	}{
		{map[string]any{"SessionId": bg.SessionId}, 400, actions.CodeMissingParameter, "InvocationId"},
		{map[string]any{"InvocationId": bg.InvocationId}, 400, actions.CodeMissingParameter, "SessionId"},
		{map[string]any{"SessionId": "nope", "InvocationId": bg.InvocationId}, 404, actions.CodeNotFound, "nope"},
		{map[string]any{"SessionId": bg.SessionId, "InvocationId": []int{1}}, 400, actions.CodeInvalidParameter, "InvocationId"},
	} {
		wantError(t, e.post("CancelRun", tc.body), tc.status, tc.code, tc.mentions)
	}
}
