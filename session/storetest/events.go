package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
)

func testSeq(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	var got []session.Event
	// Batches of every size up to past what a backend writes with one statement.
	for _, n := range []int{1, 3, 1, 5, 8, 9, 17} {
		batch := make([]session.NewEvent, n)
		for i := range batch {
			batch[i] = assistantMsg(fmt.Sprint(len(got) + i))
		}
		got = append(got, mustAppend(t, st, k, batch...)...)
	}
	if !slices.Equal(seqs(got), span(1, 44)) {
		t.Errorf("Append seqs = %v", seqs(got))
	}
	stored := mustEvents(t, st, k, session.EventQuery{})
	if !slices.Equal(seqs(stored), span(1, 44)) {
		t.Errorf("stored seqs = %v", seqs(stored))
	}
	for i, e := range stored {
		if e.SessionID != k.ID {
			t.Errorf("event %d SessionID = %q", e.Seq, e.SessionID)
		}
		if d, err := session.DataOf[session.AssistantMessageData](e); err != nil || d.Text != fmt.Sprint(i) {
			t.Errorf("event %d text %q, %v", e.Seq, d.Text, err)
		}
	}
	if s := mustGet(t, st, k); s.LastSeq != 44 {
		t.Errorf("LastSeq = %d", s.LastSeq)
	}
}

// Many appenders on one session: every seq is handed out once, batches stay contiguous.
func testConcurrentAppend(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	const workers, rounds = 16, 20
	var (
		mu   sync.Mutex
		all  []int64
		wg   sync.WaitGroup
		ctx  = ctxOf(t)
		want int64
	)
	for w := range workers {
		size := 1 + w%3
		want += int64(size * rounds)
		wg.Go(func() {
			for r := range rounds {
				batch := make([]session.NewEvent, size)
				for i := range batch {
					batch[i] = assistantMsg(fmt.Sprintf("w%d r%d e%d", w, r, i))
				}
				evs, err := st.Append(ctx, k, batch...)
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				for i := 1; i < len(evs); i++ {
					if evs[i].Seq != evs[i-1].Seq+1 {
						t.Errorf("batch not contiguous: %v", seqs(evs))
					}
				}
				mu.Lock()
				all = append(all, seqs(evs)...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(all)
	if !slices.Equal(all, span(1, want)) {
		t.Errorf("returned seqs are not exactly 1..%d (got %d seqs)", want, len(all))
	}
	if stored := mustEvents(t, st, k, session.EventQuery{}); !slices.Equal(seqs(stored), span(1, want)) {
		t.Errorf("stored seqs are not exactly 1..%d (got %d)", want, len(stored))
	}
	if s := mustGet(t, st, k); s.LastSeq != want {
		t.Errorf("LastSeq = %d, want %d", s.LastSeq, want)
	}
}

func testRoundTrip(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	at := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
	in := session.NewEvent{
		InvocationID: "inv-1", ItemID: "fc_1", Type: session.TypeToolCall, Author: "agent",
		Data:       json.RawMessage(`{"call_id":"c1","name":"f","arguments":"{\"x\":1}"}`),
		StateDelta: json.RawMessage(`{"k":"v"}`),
		Time:       at,
	}
	before := time.Now()
	got := mustAppend(t, st, k, in, session.NewEvent{Type: "custom_type"})
	after := time.Now()
	e := got[0]
	if e.Seq != 1 || e.SessionID != "s" || e.InvocationID != in.InvocationID || e.ItemID != in.ItemID ||
		e.Type != in.Type || e.Author != in.Author || !e.Time.Equal(at) {
		t.Errorf("stored event = %+v", e)
	}
	jsonEqual(t, "Data", e.Data, in.Data)
	jsonEqual(t, "StateDelta", e.StateDelta, in.StateDelta)
	zero := got[1]
	if zero.Time.Before(before.Add(-time.Second)) || zero.Time.After(after.Add(time.Second)) {
		t.Errorf("store-assigned time %v not near now", zero.Time)
	}
	jsonEqual(t, "empty Data", zero.Data, []byte(`{}`))
	if len(zero.StateDelta) != 0 {
		t.Errorf("empty StateDelta stored as %q", zero.StateDelta)
	}
	// What Append returns is exactly what reads return.
	if stored := mustEvents(t, st, k, session.EventQuery{}); !reflect.DeepEqual(stored, got) {
		t.Errorf("Events = %+v\nAppend returned %+v", stored, got)
	}
	if found, err := st.FindItem(ctxOf(t), "app", "u1", "fc_1"); err != nil || !reflect.DeepEqual(found, got[0]) {
		t.Errorf("FindItem = %+v, %v", found, err)
	}
}

// Callers can't reach stored data through slices or maps they passed in or got back.
func testCopySafety(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	in := userMsg("original")
	in.StateDelta = json.RawMessage(`{"obj":{"list":[1,2]},"app:a":{"x":1}}`)
	got := mustAppend(t, st, k, in)
	in.Data[2] = 'X'
	in.StateDelta[2] = 'X'
	got[0].Data[2] = 'Y'
	read := mustEvents(t, st, k, session.EventQuery{})
	read[0].Data[3] = 'Z'
	again := mustEvents(t, st, k, session.EventQuery{})
	jsonEqual(t, "Data after caller mutation", again[0].Data, session.MustJSON(session.UserMessageData{Text: "original"}))
	jsonEqual(t, "StateDelta after caller mutation", again[0].StateDelta, []byte(`{"obj":{"list":[1,2]},"app:a":{"x":1}}`))

	state := mustState(t, st, k)
	state.Session["obj"].(map[string]any)["list"].([]any)[0] = "mutated"
	state.App["a"].(map[string]any)["x"] = "mutated"
	state.Session["new"] = true
	fresh := mustState(t, st, k)
	if fresh.Session["obj"].(map[string]any)["list"].([]any)[0] != 1.0 || fresh.App["a"].(map[string]any)["x"] != 1.0 || fresh.Session["new"] != nil {
		t.Errorf("state changed through a returned map: %+v", fresh)
	}

	run := session.Run{Key: k, InvocationID: "inv", Meta: json.RawMessage(`{"model":"m"}`)}
	if _, err := st.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Meta[2] = 'X'
	r, err := st.GetRun(ctx, k, "inv")
	if err != nil {
		t.Fatal(err)
	}
	r.Meta[2] = 'Y'
	r2, _ := st.GetRun(ctx, k, "inv")
	jsonEqual(t, "run Meta", r2.Meta, []byte(`{"model":"m"}`))
}

func testEventQueries(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	types := []string{session.TypeUserMessage, session.TypeToolCall, session.TypeAssistantMessage}
	var batch []session.NewEvent
	for i := range 12 {
		inv := "i1"
		if i >= 6 {
			inv = "i2"
		}
		// seq i+1: types cycle user, tool_call, assistant.
		batch = append(batch, session.NewEvent{InvocationID: inv, Type: types[i%3], Author: "x",
			Data: session.MustJSON(session.UserMessageData{Text: fmt.Sprint(i + 1)})})
	}
	mustAppend(t, st, k, batch...)
	tool := []string{session.TypeToolCall}
	cases := []struct {
		name string
		q    session.EventQuery
		want []int64
	}{
		{"all", session.EventQuery{}, span(1, 12)},
		{"after", session.EventQuery{AfterSeq: 3}, span(4, 12)},
		{"before", session.EventQuery{BeforeSeq: 4}, span(1, 3)},
		{"between", session.EventQuery{AfterSeq: 3, BeforeSeq: 6}, []int64{4, 5}},
		{"empty window", session.EventQuery{AfterSeq: 5, BeforeSeq: 6}, []int64{}},
		{"inverted window", session.EventQuery{AfterSeq: 8, BeforeSeq: 3}, []int64{}},
		{"after end", session.EventQuery{AfterSeq: 20}, []int64{}},
		{"before start", session.EventQuery{BeforeSeq: 1}, []int64{}},
		{"before past end", session.EventQuery{BeforeSeq: 100}, span(1, 12)},
		{"invocation", session.EventQuery{InvocationID: "i2"}, span(7, 12)},
		{"unknown invocation", session.EventQuery{InvocationID: "nope"}, []int64{}},
		{"type", session.EventQuery{Types: tool}, []int64{2, 5, 8, 11}},
		{"types", session.EventQuery{Types: []string{session.TypeToolCall, session.TypeUserMessage}}, []int64{1, 2, 4, 5, 7, 8, 10, 11}},
		{"limit", session.EventQuery{Limit: 3}, span(1, 3)},
		{"limit over size", session.EventQuery{Limit: 100}, span(1, 12)},
		{"tail", session.EventQuery{Limit: 3, Tail: true}, span(10, 12)},
		{"tail without limit", session.EventQuery{Tail: true}, span(1, 12)},
		{"tail invocation", session.EventQuery{InvocationID: "i1", Limit: 2, Tail: true}, []int64{5, 6}},
		{"tail before", session.EventQuery{BeforeSeq: 10, Limit: 2, Tail: true}, []int64{8, 9}},
		{"tail type", session.EventQuery{Types: tool, Limit: 3, Tail: true}, []int64{5, 8, 11}},
		{"after type limit", session.EventQuery{AfterSeq: 2, Types: tool, Limit: 2}, []int64{5, 8}},
		{"all filters", session.EventQuery{AfterSeq: 1, BeforeSeq: 12, InvocationID: "i2", Types: tool, Limit: 1, Tail: true}, []int64{11}},
	}
	for _, c := range cases {
		if got := seqs(mustEvents(t, st, k, c.q)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v -> %v, want %v", c.name, c.q, got, c.want)
		}
	}
	for _, q := range []session.EventQuery{{Limit: -1}, {AfterSeq: -1}, {BeforeSeq: -1}} {
		_, err := st.Events(ctxOf(t), k, q)
		wantErr(t, fmt.Sprintf("Events(%+v)", q), err, session.ErrInvalid)
	}
}

func testFindItem(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	item := func(e session.NewEvent, id string) session.NewEvent { e.ItemID = id; return e }
	a, b := key("app", "u1", "a"), key("app", "u1", "b")
	u2, app2 := key("app", "u2", "a"), key("app2", "u1", "a")
	for _, k := range []session.Key{a, b, u2, app2} {
		mustCreate(t, st, k)
	}
	mustAppend(t, st, a, item(userMsg("a"), "msg_a"), assistantMsg("no item"))
	fromB := mustAppend(t, st, b, assistantMsg("x"), item(assistantMsg("b"), "fc_b"))
	mustAppend(t, st, u2, item(userMsg("u2"), "msg_u2"), item(userMsg("u2 dup"), "msg_a"))
	mustAppend(t, st, app2, item(userMsg("app2"), "msg_x"))

	if e, err := st.FindItem(ctx, "app", "u1", "fc_b"); err != nil || !reflect.DeepEqual(e, fromB[1]) {
		t.Errorf("FindItem across sessions = %+v, %v", e, err)
	}
	if e, err := st.FindItem(ctx, "app", "u1", "msg_a"); err != nil || e.SessionID != "a" || e.Seq != 1 {
		t.Errorf("FindItem(u1, msg_a) = %+v, %v", e, err)
	}
	if e, err := st.FindItem(ctx, "app", "u2", "msg_a"); err != nil || e.Seq != 2 {
		t.Errorf("FindItem(u2, msg_a) = %+v, %v", e, err)
	}
	if e, err := st.FindItem(ctx, "app2", "u1", "msg_x"); err != nil || e.SessionID != "a" {
		t.Errorf("FindItem(app2) = %+v, %v", e, err)
	}
	for _, c := range []struct{ app, user, id string }{
		{"app", "u1", "msg_u2"}, {"app", "u1", "msg_x"}, {"app", "u1", "nope"}, {"app3", "u1", "msg_a"},
	} {
		_, err := st.FindItem(ctx, c.app, c.user, c.id)
		wantErr(t, fmt.Sprintf("FindItem(%v)", c), err, session.ErrNotFound)
	}
	_, err := st.FindItem(ctx, "app", "u1", "")
	wantErr(t, "FindItem empty id", err, session.ErrInvalid)
}

// A batch with one bad event stores nothing: no events, no state, no summary change.
func testAtomicity(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	mustAppend(t, st, k, userMsg("first"))
	before := mustGet(t, st, k)
	good := userMsg("would change prompts")
	good.ItemID = "msg_atomic"
	good.StateDelta = json.RawMessage(`{"app:a":1,"user:u":1,"s":1}`)
	bad := []struct {
		name string
		ev   session.NewEvent
	}{
		{"empty type", session.NewEvent{Data: json.RawMessage(`{}`)}},
		{"data not JSON", session.NewEvent{Type: "x", Data: json.RawMessage(`{"a":`)}},
		{"delta array", session.NewEvent{Type: "x", StateDelta: json.RawMessage(`[1]`)}},
		{"delta string", session.NewEvent{Type: "x", StateDelta: json.RawMessage(`"s"`)}},
		{"delta number", session.NewEvent{Type: "x", StateDelta: json.RawMessage(`1`)}},
		{"delta broken", session.NewEvent{Type: "x", StateDelta: json.RawMessage(`{"a":}`)}},
		{"user_message data", session.NewEvent{Type: session.TypeUserMessage, Data: json.RawMessage(`{"text":5}`)}},
		{"run_status without status", session.NewEvent{Type: session.TypeRunStatus, Data: json.RawMessage(`{}`)}},
		{"checkpoint range", session.NewEvent{Type: session.TypeContextCheckpoint,
			Data: session.MustJSON(session.ContextCheckpointData{FromSeq: 5, UntilSeq: 2})}},
		{"checkpoint covers itself", session.NewEvent{Type: session.TypeContextCheckpoint,
			Data: session.MustJSON(session.ContextCheckpointData{FromSeq: 1, UntilSeq: 3})}},
		{"time out of range", session.NewEvent{Type: "x", Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, c := range bad {
		_, err := st.Append(ctx, k, good, c.ev)
		wantErr(t, c.name, err, session.ErrInvalid)
		if after := mustGet(t, st, k); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: session changed: %+v -> %+v", c.name, before, after)
		}
	}
	if evs := mustEvents(t, st, k, session.EventQuery{}); len(evs) != 1 {
		t.Errorf("failed appends stored events: %v", seqs(evs))
	}
	if state := mustState(t, st, k); len(state.App)+len(state.User)+len(state.Session) != 0 {
		t.Errorf("failed appends changed state: %+v", state)
	}
	_, err := st.FindItem(ctx, "app", "u1", "msg_atomic")
	wantErr(t, "FindItem after failed append", err, session.ErrNotFound)
	_, err = st.Append(ctx, k)
	wantErr(t, "Append without events", err, session.ErrInvalid)
	_, err = st.Append(ctx, key("app", "u1", "missing"), good)
	wantErr(t, "Append to missing session", err, session.ErrNotFound)
}

func testCanceled(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	ctx, cancel := context.WithCancel(ctxOf(t))
	cancel()
	_, err := st.Append(ctx, k, userMsg("x"))
	wantErr(t, "Append with canceled context", err, context.Canceled)
	_, err = st.CreateSession(ctx, key("app", "u1", "new"))
	wantErr(t, "CreateSession with canceled context", err, context.Canceled)
	if s := mustGet(t, st, k); s.LastSeq != 0 {
		t.Errorf("canceled append stored events: %+v", s)
	}
	_, err = st.GetSession(ctxOf(t), key("app", "u1", "new"))
	wantErr(t, "session from canceled create", err, session.ErrNotFound)
}
