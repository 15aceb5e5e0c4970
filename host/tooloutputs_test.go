package host_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// sortFixture is a runtime over a store with two sessions of user "u": "waiting", whose
// latest run ended interrupted asking to approve call_1 (apr_1) and an unguarded tool
// (apr_2), and "done", whose run with an approval request ended completed.
func sortFixture(t *testing.T) *host.Runtime {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, &ckptAgent{}, st) // its runner is never asked to run
	ask := func(id, callID string) session.NewEvent {
		return session.NewEvent{Type: session.TypeApprovalRequest, ItemID: id, Author: "ckpt",
			Data: session.MustJSON(session.ApprovalRequestData{CallID: callID, Name: "act", Arguments: "{}"})}
	}
	for _, s := range []struct{ id, status string }{{"waiting", session.StatusInterrupted}, {"done", session.StatusCompleted}} {
		key := session.Key{App: "ckpt", User: "u", ID: s.id}
		if _, err := st.CreateSession(ctx, key); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		inv := "run_" + s.id
		status := func(s string) session.NewEvent {
			return session.NewEvent{InvocationID: inv, Type: session.TypeRunStatus, Author: "ckpt", Data: session.MustJSON(session.RunStatusData{Status: s})}
		}
		if _, err := st.StartRun(ctx, session.Run{InvocationID: inv, Key: key, Status: session.StatusInProgress, CreatedAt: now, UpdatedAt: now},
			status(session.StatusInProgress)); err != nil {
			t.Fatal(err)
		}
		first, second := ask("apr_1", "call_1"), ask("apr_2", "")
		first.InvocationID, second.InvocationID = inv, inv
		if _, err := st.FinishRun(ctx, key, inv, s.status, first, second, status(s.status)); err != nil {
			t.Fatal(err)
		}
	}
	return rt
}

func TestSortToolOutputs(t *testing.T) {
	rt := sortFixture(t)
	raw := func(id string) json.RawMessage {
		return json.RawMessage(`{"type":"function_call_output","call_id":"` + id + `","output":"ok"}`)
	}
	out := func(id string) host.ToolOutput {
		return host.ToolOutput{ID: id, Output: "ok", Approve: true, Raw: raw(id)}
	}
	for _, tc := range []struct {
		name    string
		session string
		outs    []host.ToolOutput
		want    host.SortedToolOutputs
	}{
		{name: "no outputs", session: "waiting",
			want: host.SortedToolOutputs{Resumed: []bool{}}},
		{name: "the guarded call's output resumes by call id", session: "waiting", outs: []host.ToolOutput{out("call_1")},
			want: host.SortedToolOutputs{Resumes: []host.Resume{{CallID: "call_1", Approve: true, Output: "ok", Raw: raw("call_1")}}, Resumed: []bool{true}}},
		{name: "an output naming the approval id resumes by approval id", session: "waiting",
			outs: []host.ToolOutput{{ID: "apr_2", Reason: "no", Raw: raw("apr_2")}},
			want: host.SortedToolOutputs{Resumes: []host.Resume{{ApprovalRequestID: "apr_2", Reason: "no", Raw: raw("apr_2")}}, Resumed: []bool{true}}},
		{name: "other outputs are history, in order, beside resumes", session: "waiting",
			outs: []host.ToolOutput{out("call_9"), out("call_1"), {ID: "call_8", Raw: raw("call_8"), Item: json.RawMessage(`{"item":8}`)}},
			want: host.SortedToolOutputs{
				Resumes: []host.Resume{{CallID: "call_1", Approve: true, Output: "ok", Raw: raw("call_1")}},
				Items:   []json.RawMessage{raw("call_9"), json.RawMessage(`{"item":8}`)},
				Resumed: []bool{false, true, false}}},
		{name: "a run that ended without interrupting has nothing pending", session: "done", outs: []host.ToolOutput{out("call_1")},
			want: host.SortedToolOutputs{Items: []json.RawMessage{raw("call_1")}, Resumed: []bool{false}}},
		{name: "an unknown session has nothing pending", session: "nope", outs: []host.ToolOutput{out("apr_1")},
			want: host.SortedToolOutputs{Items: []json.RawMessage{raw("apr_1")}, Resumed: []bool{false}}},
		{name: "no session: all history", outs: []host.ToolOutput{out("call_1")},
			want: host.SortedToolOutputs{Items: []json.RawMessage{raw("call_1")}, Resumed: []bool{false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rt.SortToolOutputs(context.Background(), session.Key{App: "ckpt", User: "u", ID: tc.session}, tc.outs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// Another user's session of the same id is not the caller's: nothing of it is pending.
func TestSortToolOutputsIsScopedByUser(t *testing.T) {
	rt := sortFixture(t)
	got, err := rt.SortToolOutputs(context.Background(), session.Key{App: "ckpt", User: "v", ID: "waiting"},
		[]host.ToolOutput{{ID: "call_1", Raw: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Resumes) != 0 || len(got.Items) != 1 {
		t.Errorf("another user's outputs were sorted against u's session: %+v", got)
	}
}
