package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
)

// A run with a terminal status is recorded whole, in a session it creates.
func testWholeRun(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "whole")
	started := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	opening := []session.NewEvent{userMsg("q"), runStatus("", session.StatusInProgress)}
	for i := range opening {
		opening[i].Time = started
	}
	answer := assistantMsg("a")
	answer.ItemID = "msg_whole"
	run := session.Run{Key: k, InvocationID: "inv1", ResponseID: "resp_w1", Status: session.StatusCompleted,
		Meta: []byte(`{"m":1}`), CreateSession: true, CreatedAt: started}
	evs, err := st.StartRun(ctx, run, append(opening, answer, runStatus("", session.StatusCompleted))...)
	if err != nil {
		t.Fatalf("StartRun of a whole run: %v", err)
	}
	if !slices.Equal(seqs(evs), span(1, 4)) {
		t.Errorf("seqs %v", seqs(evs))
	}
	for i, e := range evs {
		if e.InvocationID != "inv1" || e.SessionID != k.ID {
			t.Errorf("event %d: invocation %q session %q", i, e.InvocationID, e.SessionID)
		}
	}
	if !evs[0].Time.Equal(started) || !evs[1].Time.Equal(started) || evs[3].Time.Before(started) {
		t.Errorf("times %v %v %v", evs[0].Time, evs[1].Time, evs[3].Time)
	}
	if stored := mustEvents(t, st, k, session.EventQuery{}); !reflect.DeepEqual(stored, evs) {
		t.Errorf("stored events differ from the returned ones:\n%+v\n%+v", stored, evs)
	}
	s := mustGet(t, st, k)
	if !s.CreatedAt.Equal(started) || s.LastSeq != 4 || s.FirstPrompt != "q" ||
		s.ActiveInvocationID != "inv1" || s.ActiveRunStatus != session.StatusCompleted {
		t.Errorf("session %+v", s)
	}
	r, err := st.GetRun(ctx, k, "inv1")
	if err != nil || r.Status != session.StatusCompleted || !r.CreatedAt.Equal(started) || r.UpdatedAt.Before(started) ||
		r.CreateSession || string(r.Meta) != `{"m":1}` {
		t.Errorf("GetRun = %+v, %v", r, err)
	}
	if r, err := st.GetRunByResponseID(ctx, "u1", "resp_w1"); err != nil || r.InvocationID != "inv1" {
		t.Errorf("GetRunByResponseID = %+v, %v", r, err)
	}
	if e, err := st.FindItem(ctx, "app", "u1", "msg_whole"); err != nil || e.Seq != 3 {
		t.Errorf("FindItem = %+v, %v", e, err)
	}
	if runs, err := st.ActiveRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("ActiveRuns = %+v, %v", runs, err)
	}
	_, err = st.FinishRun(ctx, k, "inv1", session.StatusFailed, runStatus("inv1", session.StatusFailed))
	wantErr(t, "FinishRun of a run recorded whole", err, session.ErrInvalid)

	// The session goes on like any other: the next run starts in it.
	if evs, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv2"}, userMsg("q2")); err != nil || !slices.Equal(seqs(evs), []int64{5}) {
		t.Errorf("StartRun after a whole run: %v %v", seqs(evs), err)
	}

	// Refused whole runs store nothing.
	before := mustGet(t, st, k)
	for name, c := range map[string]struct {
		run  session.Run
		want error
	}{
		"existing session":      {session.Run{Key: k, InvocationID: "inv3", Status: session.StatusCompleted, CreateSession: true}, session.ErrExists},
		"without CreateSession": {session.Run{Key: key("app", "u1", "w2"), InvocationID: "i", Status: session.StatusFailed}, session.ErrInvalid},
		"response id taken":     {session.Run{Key: key("app", "u1", "w3"), InvocationID: "i", ResponseID: "resp_w1", Status: session.StatusCompleted, CreateSession: true}, session.ErrExists},
	} {
		_, err := st.StartRun(ctx, c.run, userMsg("x"), runStatus("", c.run.Status))
		wantErr(t, name, err, c.want)
		if c.run.Key != k {
			_, err := st.GetSession(ctx, c.run.Key)
			wantErr(t, name+": session after a refused whole run", err, session.ErrNotFound)
		}
	}
	if after := mustGet(t, st, k); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused whole run changed the session: %+v", after)
	}

	// State deltas of a run that creates its session land in its tiers, started or whole.
	for i, status := range []string{session.StatusInProgress, session.StatusCompleted} {
		ks := key("app", "u9", fmt.Sprint("with-state-", i))
		evs := []session.NewEvent{withDelta(userMsg("q"), `{"s":1,"user:u":2,"temp:t":3}`), runStatus("", status)}
		if _, err := st.StartRun(ctx, session.Run{Key: ks, InvocationID: "inv", Status: status, CreateSession: true}, evs...); err != nil {
			t.Fatalf("StartRun %s with state: %v", status, err)
		}
		got := mustState(t, st, ks)
		if !reflect.DeepEqual(got.Session, map[string]any{"s": 1.0}) || !reflect.DeepEqual(got.User, map[string]any{"u": 2.0}) {
			t.Errorf("state after a %s start: %+v", status, got)
		}
		if s := mustGet(t, st, ks); s.LastSeq != 2 || s.FirstPrompt != "q" || s.ActiveRunStatus != status {
			t.Errorf("session after a %s start: %+v", status, s)
		}
	}

	// Whole runs racing for one new key: one is recorded.
	k2 := key("app", "u1", "whole-raced")
	oneWins(t, "racing whole run", session.ErrExists, func(i int) error {
		_, err := st.StartRun(ctx, session.Run{Key: k2, InvocationID: fmt.Sprintf("inv%d", i), Status: session.StatusCompleted, CreateSession: true},
			userMsg("q"), runStatus("", session.StatusCompleted))
		return err
	})
	if s := mustGet(t, st, k2); s.LastSeq != 2 {
		t.Errorf("session after racing whole runs %+v, want one run's 2 events", s)
	}
}

// NewSessionState is the app's and user's tiers with an empty session tier.
func testNewSessionState(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	empty := session.State{App: map[string]any{}, User: map[string]any{}, Session: map[string]any{}}
	got, err := st.NewSessionState(ctx, "app", "u1")
	if err != nil || !reflect.DeepEqual(got, empty) {
		t.Errorf("NewSessionState of nothing stored = %+v, %v", got, err)
	}
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	mustAppend(t, st, k, withDelta(userMsg("q"), `{"app:a":1,"user:u":"x","s":true}`))
	got, err = st.NewSessionState(ctx, "app", "u1")
	want := session.State{App: map[string]any{"a": 1.0}, User: map[string]any{"u": "x"}, Session: map[string]any{}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("NewSessionState = %+v, %v; want %+v", got, err, want)
	}
	// Another user shares the app's tier only; another app shares nothing.
	if got, err := st.NewSessionState(ctx, "app", "u2"); err != nil || !reflect.DeepEqual(got.App, want.App) || len(got.User) != 0 {
		t.Errorf("other user: %+v, %v", got, err)
	}
	if got, err := st.NewSessionState(ctx, "other", "u1"); err != nil || !reflect.DeepEqual(got, empty) {
		t.Errorf("other app: %+v, %v", got, err)
	}
	// What it returns is a copy.
	got.App["a"] = 2.0
	if again, _ := st.NewSessionState(ctx, "app", "u1"); again.App["a"] != 1.0 {
		t.Errorf("NewSessionState shares memory with the store: %+v", again)
	}
	for _, c := range [][2]string{{"", "u1"}, {"app", ""}} {
		_, err := st.NewSessionState(ctx, c[0], c[1])
		wantErr(t, fmt.Sprintf("NewSessionState(%q, %q)", c[0], c[1]), err, session.ErrInvalid)
	}
}
