package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
)

func testRunLifecycle(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	run := session.Run{Key: k, InvocationID: "inv1", ResponseID: "resp_1", Meta: json.RawMessage(`{"model":"m"}`)}
	evs, err := st.StartRun(ctx, run, userMsg("q"), runStatus("", session.StatusInProgress))
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	if !slices.Equal(seqs(evs), []int64{1, 2}) || evs[0].InvocationID != "inv1" || evs[1].InvocationID != "inv1" {
		t.Errorf("StartRun events = %+v", evs)
	}
	got, err := st.GetRun(ctx, k, "inv1")
	if err != nil || got.Status != session.StatusInProgress || got.Key != k || got.ResponseID != "resp_1" ||
		got.Deleted || got.CreatedAt.IsZero() {
		t.Errorf("GetRun = %+v, %v", got, err)
	}
	jsonEqual(t, "run meta", got.Meta, run.Meta)
	s := mustGet(t, st, k)
	if s.ActiveInvocationID != "inv1" || s.ActiveRunStatus != session.StatusInProgress || s.FirstPrompt != "q" {
		t.Errorf("session during run = %+v", s)
	}

	// A second run while one is in progress stores nothing.
	_, err = st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv2", ResponseID: "resp_2"}, userMsg("q2"))
	wantErr(t, "second StartRun", err, session.ErrRunActive)
	if after := mustGet(t, st, k); !reflect.DeepEqual(after, s) {
		t.Errorf("rejected StartRun changed session: %+v", after)
	}
	_, err = st.GetRun(ctx, k, "inv2")
	wantErr(t, "GetRun of rejected run", err, session.ErrNotFound)
	_, err = st.GetRunByResponseID(ctx, "u1", "resp_2")
	wantErr(t, "response of rejected run", err, session.ErrNotFound)

	for _, c := range []struct {
		name, inv, status string
		evs               []session.NewEvent
		want              error
	}{
		{"non-terminal status", "inv1", session.StatusInProgress, nil, session.ErrInvalid},
		{"empty status", "inv1", "", nil, session.ErrInvalid},
		{"unknown run", "nope", session.StatusCompleted, nil, session.ErrNotFound},
		{"empty invocation", "", session.StatusCompleted, nil, session.ErrInvalid},
		{"event of another run", "inv1", session.StatusCompleted, []session.NewEvent{runStatus("other", session.StatusCompleted)}, session.ErrInvalid},
		{"bad event", "inv1", session.StatusCompleted, []session.NewEvent{{Type: ""}}, session.ErrInvalid},
	} {
		_, err := st.FinishRun(ctx, k, c.inv, c.status, c.evs...)
		wantErr(t, "FinishRun "+c.name, err, c.want)
	}
	if after := mustGet(t, st, k); !reflect.DeepEqual(after, s) {
		t.Errorf("rejected FinishRun changed session: %+v", after)
	}
	if r, _ := st.GetRun(ctx, k, "inv1"); r.Status != session.StatusInProgress {
		t.Errorf("rejected FinishRun changed run: %+v", r)
	}

	evs, err = st.FinishRun(ctx, k, "inv1", session.StatusCompleted, assistantMsg("a"), runStatus("", session.StatusCompleted))
	if err != nil || !slices.Equal(seqs(evs), []int64{3, 4}) || evs[1].InvocationID != "inv1" {
		t.Fatalf("FinishRun = %+v, %v", evs, err)
	}
	got, _ = st.GetRun(ctx, k, "inv1")
	if got.Status != session.StatusCompleted || got.UpdatedAt.Before(got.CreatedAt) {
		t.Errorf("finished run = %+v", got)
	}
	if s := mustGet(t, st, k); s.ActiveRunStatus != session.StatusCompleted || s.LastSeq != 4 {
		t.Errorf("session after run = %+v", s)
	}
	_, err = st.FinishRun(ctx, k, "inv1", session.StatusFailed, runStatus("", session.StatusFailed))
	wantErr(t, "FinishRun twice", err, session.ErrInvalid)
	if s := mustGet(t, st, k); s.LastSeq != 4 {
		t.Errorf("second FinishRun stored events: LastSeq %d", s.LastSeq)
	}

	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv2"}); err != nil {
		t.Errorf("StartRun after finish: %v", err)
	}
	if _, err := st.FinishRun(ctx, k, "inv2", session.StatusCancelled); err != nil {
		t.Errorf("FinishRun without events: %v", err)
	}
	for _, c := range []struct {
		name string
		run  session.Run
		want error
	}{
		{"duplicate invocation", session.Run{Key: k, InvocationID: "inv1"}, session.ErrExists},
		{"duplicate response", session.Run{Key: k, InvocationID: "inv3", ResponseID: "resp_1"}, session.ErrExists},
		{"starts terminal", session.Run{Key: k, InvocationID: "inv3", Status: session.StatusCompleted}, session.ErrInvalid},
		{"no invocation", session.Run{Key: k}, session.ErrInvalid},
		{"bad meta", session.Run{Key: k, InvocationID: "inv3", Meta: json.RawMessage(`{`)}, session.ErrInvalid},
		{"missing session", session.Run{Key: key("app", "u1", "missing"), InvocationID: "inv3"}, session.ErrNotFound},
	} {
		_, err := st.StartRun(ctx, c.run)
		wantErr(t, "StartRun "+c.name, err, c.want)
	}
}

func testRunStartFailure(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	before := mustGet(t, st, k)
	_, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv", ResponseID: "resp"},
		userMsg("q"), session.NewEvent{Type: "x", Data: json.RawMessage(`nope`)})
	wantErr(t, "StartRun with a bad event", err, session.ErrInvalid)
	_, err = st.GetRun(ctx, k, "inv")
	wantErr(t, "run of failed StartRun", err, session.ErrNotFound)
	if runs, _ := st.ActiveRuns(ctx); len(runs) != 0 {
		t.Errorf("ActiveRuns = %+v", runs)
	}
	if after := mustGet(t, st, k); !reflect.DeepEqual(after, before) {
		t.Errorf("failed StartRun changed session: %+v", after)
	}
	// The session is not blocked by the failed start.
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv", ResponseID: "resp"}, userMsg("q")); err != nil {
		t.Errorf("StartRun after failed start: %v", err)
	}
}

// Racing StartRuns on one session: exactly one wins.
func testConcurrentStartRun(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	oneWins(t, "StartRun", session.ErrRunActive, func(i int) error {
		_, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: fmt.Sprint("inv", i)},
			userMsg("q"), runStatus("", session.StatusInProgress))
		return err
	})
	if s := mustGet(t, st, k); s.LastSeq != 2 {
		t.Errorf("LastSeq = %d, want 2 (one run's events)", s.LastSeq)
	}
	if runs, _ := st.ActiveRuns(ctx); len(runs) != 1 {
		t.Errorf("ActiveRuns = %+v", runs)
	}
}

func testResponses(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	a, b, c := key("app", "u1", "s"), key("app2", "u1", "s"), key("app", "u2", "s")
	for i, k := range []session.Key{a, b, c} {
		mustCreate(t, st, k)
		if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv", ResponseID: fmt.Sprint("resp_", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := st.GetRunByResponseID(ctx, "u1", "resp_1"); err != nil || r.Key != b {
		t.Errorf("response of another app of the user = %+v, %v", r, err)
	}
	_, err := st.GetRunByResponseID(ctx, "u2", "resp_0")
	wantErr(t, "another user's response", err, session.ErrNotFound)
	wantErr(t, "delete another user's response", st.DeleteRunResponse(ctx, "u2", "resp_0"), session.ErrNotFound)
	if _, err := st.GetRunByResponseID(ctx, "u1", "resp_0"); err != nil {
		t.Errorf("foreign delete removed the response: %v", err)
	}
	if err := st.DeleteRunResponse(ctx, "u1", "resp_0"); err != nil {
		t.Fatalf("DeleteRunResponse: %v", err)
	}
	_, err = st.GetRunByResponseID(ctx, "u1", "resp_0")
	wantErr(t, "deleted response", err, session.ErrNotFound)
	wantErr(t, "delete twice", st.DeleteRunResponse(ctx, "u1", "resp_0"), session.ErrNotFound)
	wantErr(t, "delete unknown", st.DeleteRunResponse(ctx, "u1", "resp_nope"), session.ErrNotFound)
	if r, err := st.GetRun(ctx, a, "inv"); err != nil || !r.Deleted || r.ResponseID != "resp_0" {
		t.Errorf("GetRun of deleted response = %+v, %v", r, err)
	}
	// A response id stays taken after its response is deleted: ids are never reused.
	if _, err := st.FinishRun(ctx, c, "inv", session.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	_, err = st.StartRun(ctx, session.Run{Key: c, InvocationID: "inv9", ResponseID: "resp_0"})
	wantErr(t, "reusing a deleted response id", err, session.ErrExists)
	_, err = st.GetRunByResponseID(ctx, "u1", "")
	wantErr(t, "empty response id", err, session.ErrInvalid)
	wantErr(t, "delete empty user", st.DeleteRunResponse(ctx, "", "resp_1"), session.ErrInvalid)
}

func testActiveRuns(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	if runs, err := st.ActiveRuns(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("ActiveRuns of empty store = %+v, %v", runs, err)
	}
	keys := []session.Key{key("app", "u1", "s"), key("app2", "u1", "s"), key("app", "u2", "s")}
	for i, k := range keys {
		mustCreate(t, st, k)
		if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: fmt.Sprint("inv", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.FinishRun(ctx, keys[1], "inv1", session.StatusFailed); err != nil {
		t.Fatal(err)
	}
	runs, err := st.ActiveRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		if r.Status != session.StatusInProgress {
			t.Errorf("ActiveRuns returned %+v", r)
		}
		got = append(got, r.Key.App+"/"+r.Key.User+"/"+r.InvocationID)
	}
	slices.Sort(got)
	if want := []string{"app/u1/inv0", "app/u2/inv2"}; !slices.Equal(got, want) {
		t.Errorf("ActiveRuns = %v, want %v", got, want)
	}
}

// testStartRunCreatesSession: a new conversation's first turn creates its session in
// the run's transaction; a refused start creates nothing; an existing session is used.
func testStartRunCreatesSession(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "fresh")
	_, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv0"}, userMsg("q"))
	wantErr(t, "StartRun without CreateSession", err, session.ErrNotFound)

	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	evs, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv1", ResponseID: "resp_c1", CreateSession: true, CreatedAt: created},
		userMsg("q"), runStatus("", session.StatusInProgress))
	if err != nil {
		t.Fatalf("StartRun creating its session: %v", err)
	}
	if !slices.Equal(seqs(evs), []int64{1, 2}) {
		t.Errorf("events %v", seqs(evs))
	}
	s := mustGet(t, st, k)
	if !s.CreatedAt.Equal(created) || s.ActiveInvocationID != "inv1" || s.FirstPrompt != "q" || s.LastSeq != 2 {
		t.Errorf("created session %+v", s)
	}
	if r, err := st.GetRun(ctx, k, "inv1"); err != nil || r.CreateSession || !r.CreatedAt.Equal(created) {
		t.Errorf("GetRun = %+v, %v", r, err)
	}
	if _, err := st.FinishRun(ctx, k, "inv1", session.StatusCompleted, runStatus("inv1", session.StatusCompleted)); err != nil {
		t.Fatal(err)
	}
	// The session exists now: the flag just starts the run in it.
	evs, err = st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv2", CreateSession: true}, userMsg("q2"))
	if err != nil || !slices.Equal(seqs(evs), []int64{4}) {
		t.Fatalf("StartRun in the existing session: %v %v", seqs(evs), err)
	}
	if again := mustGet(t, st, k); !again.CreatedAt.Equal(created) {
		t.Errorf("creation time changed to %v", again.CreatedAt)
	}

	// Refused starts (a response id taken, invalid events) leave no session behind.
	for name, c := range map[string]struct {
		run session.Run
		evs []session.NewEvent
	}{
		"response id taken": {session.Run{Key: key("app", "u1", "r1"), InvocationID: "i", ResponseID: "resp_c1", CreateSession: true}, []session.NewEvent{userMsg("x")}},
		"invalid event":     {session.Run{Key: key("app", "u1", "r2"), InvocationID: "i", CreateSession: true}, []session.NewEvent{{Type: ""}}},
	} {
		if _, err := st.StartRun(ctx, c.run, c.evs...); err == nil {
			t.Errorf("%s: StartRun succeeded", name)
		}
		_, err := st.GetSession(ctx, c.run.Key)
		wantErr(t, name+": session after refused start", err, session.ErrNotFound)
	}
	// Concurrent first turns of one new key: one session, one run in progress.
	k2 := key("app", "u1", "raced")
	oneWins(t, "concurrent first turn", session.ErrRunActive, func(i int) error {
		_, err := st.StartRun(ctx, session.Run{Key: k2, InvocationID: fmt.Sprintf("inv%d", i), CreateSession: true}, userMsg("q"))
		return err
	})
}
