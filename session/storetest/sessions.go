package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func testCreateGet(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s1")
	s := mustCreate(t, st, k)
	if s.Key != k || s.LastSeq != 0 || s.Title != "" || s.CheckpointSeq != 0 {
		t.Errorf("new session = %+v", s)
	}
	if s.CreatedAt.IsZero() || !s.UpdatedAt.Equal(s.CreatedAt) {
		t.Errorf("new session times: created %v updated %v", s.CreatedAt, s.UpdatedAt)
	}
	if got := mustGet(t, st, k); !reflect.DeepEqual(got, s) {
		t.Errorf("GetSession = %+v, want %+v", got, s)
	}
	_, err := st.CreateSession(ctx, k)
	wantErr(t, "duplicate CreateSession", err, session.ErrExists)
	_, err = st.GetSession(ctx, key("app", "u1", "nope"))
	wantErr(t, "GetSession of missing", err, session.ErrNotFound)

	for _, bad := range []session.Key{key("", "u", "s"), key("a", "", "s"), key("a", "u", ""), {}} {
		_, err := st.CreateSession(ctx, bad)
		wantErr(t, "CreateSession invalid key", err, session.ErrInvalid)
		_, err = st.GetSession(ctx, bad)
		wantErr(t, "GetSession invalid key", err, session.ErrInvalid)
	}
}

// Ids are opaque: no component may leak into another through a separator.
func testOpaqueIDs(t *testing.T, st session.Store) {
	keys := []session.Key{
		key("a", "b:c", "d"), key("a:b", "c", "d"), key("a", "b", "c:d"), key("a", "b:c:d", "x"),
		key("a", "b", "c/d"), key("a", "b/c", "d"), key("a/b", "c", "d"),
		key("a", "b|c", "d"), key("a|b", "c", "d"), key("a", "b", "c\x00d"), key("a", "b\x00c", "d"),
		key("a", "b", "c d"), key("a", "b", "'; DROP TABLE sessions; --"), key("a", "b", "%_*"),
		key("应用", "用户", "会话 🚀"), key("a", "b", strings.Repeat("x", 1000)),
	}
	for i, k := range keys {
		mustCreate(t, st, k)
		mustAppend(t, st, k, userMsg(fmt.Sprint("prompt ", i)))
	}
	for i, k := range keys {
		s := mustGet(t, st, k)
		if s.Key != k || s.LastSeq != 1 || s.FirstPrompt != fmt.Sprint("prompt ", i) {
			t.Errorf("session %d: key %v, LastSeq %d, FirstPrompt %q", i, s.Key == k, s.LastSeq, s.FirstPrompt)
		}
		evs := mustEvents(t, st, k, session.EventQuery{})
		if len(evs) != 1 || evs[0].SessionID != k.ID {
			t.Errorf("session %d has %d events", i, len(evs))
		}
	}
	for _, owner := range [][2]string{{"a", "b:c"}, {"a:b", "c"}, {"a", "b"}} {
		ss, total, err := st.ListSessions(ctxOf(t), owner[0], owner[1], session.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.App != owner[0] || s.User != owner[1] {
				t.Errorf("List(%q) returned %+v", owner, s.Key)
			}
		}
		if total != len(ss) {
			t.Errorf("List(%q) total %d, rows %d", owner, total, len(ss))
		}
	}
}

func testList(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	for i := range 5 {
		mustCreate(t, st, key("app", "u1", "s"+string(rune('0'+i))))
	}
	mustCreate(t, st, key("app", "u2", "other-user"))
	mustCreate(t, st, key("app2", "u1", "other-app"))
	mustAppend(t, st, key("app", "u1", "s1"), userMsg("bump"))
	all := []string{"s1", "s4", "s3", "s2", "s0"}

	cases := []struct {
		offset, limit int
		want          []string
	}{
		{0, 0, all}, {0, 2, all[:2]}, {2, 2, all[2:4]}, {4, 2, all[4:]},
		{5, 2, []string{}}, {10, 0, []string{}}, {1, 100, all[1:]},
	}
	for _, c := range cases {
		ss, total, err := st.ListSessions(ctx, "app", "u1", session.ListQuery{Offset: c.offset, Limit: c.limit})
		if err != nil {
			t.Fatalf("List(%d,%d): %v", c.offset, c.limit, err)
		}
		if got := ids(ss); !slices.Equal(got, c.want) || total != 5 {
			t.Errorf("List(offset %d, limit %d) = %v total %d, want %v total 5", c.offset, c.limit, got, total, c.want)
		}
	}
	ss, _, _ := st.ListSessions(ctx, "app", "u1", session.ListQuery{})
	for i := 1; i < len(ss); i++ {
		if ss[i].UpdatedAt.After(ss[i-1].UpdatedAt) {
			t.Errorf("list not ordered by UpdatedAt desc at %d", i)
		}
	}
	if ss, total, err := st.ListSessions(ctx, "app", "nobody", session.ListQuery{}); err != nil || len(ss) != 0 || total != 0 {
		t.Errorf("List for user without sessions = %v, %d, %v", ss, total, err)
	}
	for _, q := range []session.ListQuery{{Offset: -1}, {Limit: -1}} {
		_, _, err := st.ListSessions(ctx, "app", "u1", q)
		wantErr(t, "List negative paging", err, session.ErrInvalid)
	}
	_, _, err := st.ListSessions(ctx, "app", "", session.ListQuery{})
	wantErr(t, "List without user", err, session.ErrInvalid)
}

func testRename(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	mustAppend(t, st, k, userMsg("hello\n  there"))
	if s := mustGet(t, st, k); s.Title != "hello there" {
		t.Errorf("automatic title = %q", s.Title)
	}
	before := mustGet(t, st, k)
	s, err := st.RenameSession(ctx, k, "  My title ")
	if err != nil || s.Title != "My title" {
		t.Fatalf("Rename = %+v, %v", s, err)
	}
	if !s.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("rename changed UpdatedAt")
	}
	mustAppend(t, st, k, userMsg("second prompt"))
	if s := mustGet(t, st, k); s.Title != "My title" || s.LastPrompt != "second prompt" {
		t.Errorf("after rename and append: %+v", s)
	}
	if s, err := st.RenameSession(ctx, k, " "); err != nil || s.Title != "hello there" {
		t.Errorf("blank rename restores automatic title: %+v, %v", s, err)
	}
	_, err = st.RenameSession(ctx, key("app", "u1", "missing"), "x")
	wantErr(t, "Rename missing", err, session.ErrNotFound)
	_, err = st.RenameSession(ctx, k, strings.Repeat("é", 513))
	wantErr(t, "Rename too long", err, session.ErrInvalid)
	if s := mustGet(t, st, k); s.Title != "hello there" {
		t.Errorf("failed rename changed title to %q", s.Title)
	}
}

func testDelete(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "doomed")
	keep := key("app", "u1", "kept")
	mustCreate(t, st, k)
	mustCreate(t, st, keep)
	ev := userMsg("hi")
	ev.ItemID = "msg_doomed"
	mustAppend(t, st, k, withDelta(ev, `{"s":1,"user:u":1,"app:a":1}`))
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv", ResponseID: "resp_doomed"}, runStatus("", session.StatusInProgress)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, keep, userMsg("stay"))

	if err := st.DeleteSession(ctx, k); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err := st.GetSession(ctx, k)
	wantErr(t, "Get deleted", err, session.ErrNotFound)
	_, err = st.Events(ctx, k, session.EventQuery{})
	wantErr(t, "Events deleted", err, session.ErrNotFound)
	_, err = st.GetRun(ctx, k, "inv")
	wantErr(t, "GetRun deleted", err, session.ErrNotFound)
	_, err = st.GetRunByResponseID(ctx, "u1", "resp_doomed")
	wantErr(t, "GetRunByResponseID deleted", err, session.ErrNotFound)
	_, err = st.FindItem(ctx, "app", "u1", "msg_doomed")
	wantErr(t, "FindItem deleted", err, session.ErrNotFound)
	if runs, err := st.ActiveRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("ActiveRuns after delete = %+v, %v", runs, err)
	}
	wantErr(t, "second delete", st.DeleteSession(ctx, k), session.ErrNotFound)

	// The key is free again and starts from nothing; app and user tiers outlive it.
	s := mustCreate(t, st, k)
	if s.LastSeq != 0 || s.Title != "" {
		t.Errorf("recreated session = %+v", s)
	}
	if evs := mustEvents(t, st, k, session.EventQuery{}); len(evs) != 0 {
		t.Errorf("recreated session has events %+v", evs)
	}
	state := mustState(t, st, k)
	if len(state.Session) != 0 || state.User["u"] != 1.0 || state.App["a"] != 1.0 {
		t.Errorf("state after delete = %+v", state)
	}
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "inv", ResponseID: "resp_doomed"}); err != nil {
		t.Errorf("run and response ids are free after delete: %v", err)
	}
	if s := mustGet(t, st, keep); s.LastSeq != 1 {
		t.Errorf("other session touched: %+v", s)
	}
}

// Another user's or app's key finds nothing, for every method, and changes nothing.
func testIsolation(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	owner := key("app", "u1", "s")
	mustCreate(t, st, owner)
	ev := userMsg("secret")
	ev.ItemID = "msg_secret"
	mustAppend(t, st, owner, withDelta(ev, `{"s":"secret"}`))
	if _, err := st.StartRun(ctx, session.Run{Key: owner, InvocationID: "inv", ResponseID: "resp_secret"}, runStatus("", session.StatusInProgress)); err != nil {
		t.Fatal(err)
	}
	before := mustGet(t, st, owner)

	type call struct {
		name string
		call func() error
	}
	for _, foreign := range []session.Key{key("app", "u2", "s"), key("app2", "u1", "s"), key("app2", "u2", "s")} {
		calls := []call{
			{"GetSession", func() error { _, err := st.GetSession(ctx, foreign); return err }},
			{"RenameSession", func() error { _, err := st.RenameSession(ctx, foreign, "x"); return err }},
			{"DeleteSession", func() error { return st.DeleteSession(ctx, foreign) }},
			{"Append", func() error { _, err := st.Append(ctx, foreign, userMsg("x")); return err }},
			{"Events", func() error { _, err := st.Events(ctx, foreign, session.EventQuery{}); return err }},
			{"FindItem", func() error { _, err := st.FindItem(ctx, foreign.App, foreign.User, "msg_secret"); return err }},
			{"StartRun", func() error {
				_, err := st.StartRun(ctx, session.Run{Key: foreign, InvocationID: "inv2"}, userMsg("x"))
				return err
			}},
			{"FinishRun", func() error {
				_, err := st.FinishRun(ctx, foreign, "inv", session.StatusCompleted)
				return err
			}},
			{"GetRun", func() error { _, err := st.GetRun(ctx, foreign, "inv"); return err }},
			{"State", func() error { _, err := st.State(ctx, foreign); return err }},
		}
		if foreign.User != owner.User {
			calls = append(calls,
				call{"GetRunByResponseID", func() error { _, err := st.GetRunByResponseID(ctx, foreign.User, "resp_secret"); return err }},
				call{"DeleteRunResponse", func() error { return st.DeleteRunResponse(ctx, foreign.User, "resp_secret") }},
			)
		}
		for _, c := range calls {
			wantErr(t, c.name+" with "+foreign.App+"/"+foreign.User, c.call(), session.ErrNotFound)
		}
		if ss, total, err := st.ListSessions(ctx, foreign.App, foreign.User, session.ListQuery{}); err != nil || len(ss) != 0 || total != 0 {
			t.Errorf("List for %+v = %v, %d, %v", foreign, ss, total, err)
		}
	}
	if after := mustGet(t, st, owner); !reflect.DeepEqual(after, before) {
		t.Errorf("owner's session changed: %+v -> %+v", before, after)
	}
	if r, err := st.GetRunByResponseID(ctx, "u1", "resp_secret"); err != nil || r.Status != session.StatusInProgress {
		t.Errorf("owner's run changed: %+v, %v", r, err)
	}

	// The same id under another user is an independent session.
	other := key("app", "u2", "s")
	mustCreate(t, st, other)
	mustAppend(t, st, other, withDelta(userMsg("mine"), `{"s":"u2"}`))
	if evs := mustEvents(t, st, other, session.EventQuery{}); len(evs) != 1 || evs[0].ItemID != "" {
		t.Errorf("u2 sees %+v", evs)
	}
	if state := mustState(t, st, other); state.Session["s"] != "u2" {
		t.Errorf("u2 state = %+v", state)
	}
	if state := mustState(t, st, owner); state.Session["s"] != "secret" {
		t.Errorf("u1 state = %+v", state)
	}
	if s := mustGet(t, st, owner); s.LastSeq != before.LastSeq {
		t.Errorf("owner LastSeq %d -> %d", before.LastSeq, s.LastSeq)
	}
}
