// Package storetest is the conformance suite every session.Store backend must pass:
// the same cases, run against each backend, define the store's semantics.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/agentengine/agentengine/session"
)

// Run runs the suite. open returns a new, empty store for one subtest; it may be called
// from parallel subtests. Run closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) session.Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, st session.Store)
	}{
		{"CreateGet", testCreateGet},
		{"OpaqueIDs", testOpaqueIDs},
		{"List", testList},
		{"Rename", testRename},
		{"Delete", testDelete},
		{"TenantIsolation", testIsolation},
		{"SeqAssignment", testSeq},
		{"ConcurrentAppend", testConcurrentAppend},
		{"EventRoundTrip", testRoundTrip},
		{"CopySafety", testCopySafety},
		{"EventQueries", testEventQueries},
		{"FindItem", testFindItem},
		{"AppendAtomicity", testAtomicity},
		{"CanceledContext", testCanceled},
		{"RunLifecycle", testRunLifecycle},
		{"RunStartFailureStoresNothing", testRunStartFailure},
		{"StartRunCreatesSession", testStartRunCreatesSession},
		{"ConcurrentStartRun", testConcurrentStartRun},
		{"WholeRun", testWholeRun},
		{"NewSessionState", testNewSessionState},
		{"Responses", testResponses},
		{"ActiveRuns", testActiveRuns},
		{"StateTiers", testStateTiers},
		{"StateMerged", testStateMerged},
		{"Summary", testSummary},
		{"CheckpointHistory", testCheckpointHistory},
		{"Checkpoints", testCheckpoints},
		{"Docs", testDocs},
		{"DocsGoWithTheirSession", testDocsOfDeletedSession},
		{"ConcurrentPutDoc", testConcurrentPutDoc},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			t.Cleanup(func() {
				if err := st.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			c.fn(t, st)
		})
	}
}

func ctxOf(t *testing.T) context.Context { return t.Context() }

func key(app, user, id string) session.Key { return session.Key{App: app, User: user, ID: id} }

func mustCreate(t *testing.T, st session.Store, k session.Key) session.Session {
	t.Helper()
	s, err := st.CreateSession(ctxOf(t), k)
	if err != nil {
		t.Fatalf("CreateSession(%+v): %v", k, err)
	}
	return s
}

func mustGet(t *testing.T, st session.Store, k session.Key) session.Session {
	t.Helper()
	s, err := st.GetSession(ctxOf(t), k)
	if err != nil {
		t.Fatalf("GetSession(%+v): %v", k, err)
	}
	return s
}

func mustAppend(t *testing.T, st session.Store, k session.Key, evs ...session.NewEvent) []session.Event {
	t.Helper()
	out, err := st.Append(ctxOf(t), k, evs...)
	if err != nil {
		t.Fatalf("Append(%+v): %v", k, err)
	}
	if len(out) != len(evs) {
		t.Fatalf("Append returned %d events, want %d", len(out), len(evs))
	}
	return out
}

func mustEvents(t *testing.T, st session.Store, k session.Key, q session.EventQuery) []session.Event {
	t.Helper()
	out, err := st.Events(ctxOf(t), k, q)
	if err != nil {
		t.Fatalf("Events(%+v, %+v): %v", k, q, err)
	}
	return out
}

func mustState(t *testing.T, st session.Store, k session.Key) session.State {
	t.Helper()
	s, err := st.State(ctxOf(t), k)
	if err != nil {
		t.Fatalf("State(%+v): %v", k, err)
	}
	return s
}

// oneWins runs attempt 8 times at once (attempt(i) for i in 0..7): exactly one must
// succeed, and every other fail with lose.
func oneWins(t *testing.T, what string, lose error, attempt func(i int) error) {
	t.Helper()
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = attempt(i) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, lose):
			t.Errorf("losing %s: %v, want %v", what, err, lose)
		}
	}
	if won != 1 {
		t.Errorf("%d of 8 racing %ss won, want 1", won, what)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}

func userMsg(text string) session.NewEvent {
	return session.NewEvent{Type: session.TypeUserMessage, Author: "user",
		Data: session.MustJSON(session.UserMessageData{Text: text})}
}

func assistantMsg(text string) session.NewEvent {
	return session.NewEvent{Type: session.TypeAssistantMessage, Author: "agent",
		Data: session.MustJSON(session.AssistantMessageData{Text: text})}
}

func runStatus(inv, status string) session.NewEvent {
	return session.NewEvent{InvocationID: inv, Type: session.TypeRunStatus, Author: "system",
		Data: session.MustJSON(session.RunStatusData{Status: status})}
}

func withDelta(e session.NewEvent, delta string) session.NewEvent {
	e.StateDelta = json.RawMessage(delta)
	return e
}

func seqs(evs []session.Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func span(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func ids(ss []session.Session) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func jsonEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: stored JSON %q does not decode: %v", what, got, err)
		return
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: test JSON %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}
