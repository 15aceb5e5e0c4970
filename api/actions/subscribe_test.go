package actions_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session/memory"
)

// follow reads a subscription to its end and splits it into stored events, live
// frames and heartbeats; it checks the framing invariants on the way.
type followed struct {
	stored     []eventRow
	live       []liveRow
	heartbeats int
	done       bool
}

type liveRow struct {
	EventType, InvocationId string
	SeqId                   *int64
	Content                 struct{ Parts []struct{ Text string } }
	Metadata                struct {
		Delta  string `json:"delta"`
		ItemID string `json:"item_id"`
		Live   bool   `json:"live"`
	}
}

func (l liveRow) text() string {
	if len(l.Content.Parts) == 0 {
		return ""
	}
	return l.Content.Parts[0].Text
}

func readAll(t *testing.T, s *sseStream) followed {
	t.Helper()
	var out followed
	for _, f := range s.all(t) {
		if out.done {
			t.Fatalf("frame after [DONE]: %+v", f)
		}
		switch {
		case f.comment:
			if f.data != "heartbeat" {
				t.Errorf("comment %q", f.data)
			}
			out.heartbeats++
		case f.data == "[DONE]":
			out.done = true
		case f.event == "conversation.event":
			ev := storedEvent(t, f)
			if f.id != strconv.FormatInt(ev.SeqId, 10) {
				t.Errorf("id: %q for SeqId %d", f.id, ev.SeqId)
			}
			out.stored = append(out.stored, ev)
		case f.event == "conversation.delta":
			var l liveRow
			if err := json.Unmarshal([]byte(f.data), &l); err != nil || f.id != "" || l.SeqId == nil || !l.Metadata.Live {
				t.Fatalf("live frame %+v (%v)", f, err)
			}
			if n := len(out.stored); n > 0 && *l.SeqId < out.stored[n-1].SeqId {
				t.Errorf("live frame at seq %d after stored seq %d", *l.SeqId, out.stored[n-1].SeqId)
			}
			out.live = append(out.live, l)
		default:
			t.Fatalf("unexpected frame %+v", f)
		}
	}
	if !out.done {
		t.Error("stream closed without [DONE]")
	}
	return out
}

func seqsOf(evs []eventRow) []int64 {
	out := []int64{}
	for _, ev := range evs {
		out = append(out, ev.SeqId)
	}
	return out
}

func TestSubscribeFinishedRun(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	evs := e.events(run.SessionID)
	inv := evs[0].InvocationId
	ctx := ctxTimeout(t, 10*time.Second)

	got := readAll(t, e.stream(ctx, "GET", subscribePath(run.SessionID, inv), nil))
	if !reflect.DeepEqual(seqsOf(got.stored), []int64{1, 2, 3, 4, 5}) || len(got.live) != 0 {
		t.Fatalf("stored %v live %d", seqsOf(got.stored), len(got.live))
	}
	// Frames carry exactly what ListSessionEvents lists, plus the response id.
	if got.stored[3].Metadata["response_id"] != run.ID {
		t.Errorf("assistant message frame metadata %v", got.stored[3].Metadata)
	}
	for i := range evs {
		want, have := evs[i], got.stored[i]
		delete(have.Metadata, "response_id")
		var wc, hc any
		_ = json.Unmarshal(want.Content, &wc)
		_ = json.Unmarshal(have.Content, &hc)
		want.Content, have.Content = nil, nil
		if !reflect.DeepEqual(want, have) || !reflect.DeepEqual(wc, hc) {
			t.Errorf("frame %d:\n%+v\nListSessionEvents:\n%+v", i, have, want)
		}
	}
	for _, tc := range []struct {
		extra  []string
		header []string
		want   []int64
	}{
		{[]string{"AfterSeqId", "3"}, nil, []int64{4, 5}},
		{[]string{"AfterSeqId", "99"}, nil, []int64{}},
		{[]string{"AfterSeqId", "1"}, []string{"Last-Event-ID", "4"}, []int64{5}},
		{[]string{"AgentId", "echo", "UserId", "user"}, nil, []int64{1, 2, 3, 4, 5}},
	} {
		got := readAll(t, e.stream(ctx, "GET", subscribePath(run.SessionID, inv, tc.extra...), nil, tc.header...))
		if !reflect.DeepEqual(seqsOf(got.stored), tc.want) {
			t.Errorf("%v %v: stored %v, want %v", tc.extra, tc.header, seqsOf(got.stored), tc.want)
		}
	}
}

func TestSubscribeReconnectMidRun(t *testing.T) {
	e := newEnv(t)
	var bg struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("hello there"), "ModelOptions": slow(40, 15)}, &bg)
	ctx := ctxTimeout(t, 20*time.Second)

	// The first page load sees the start of the answer, then goes away.
	first := e.stream(ctx, "GET", subscribePath(bg.SessionId, bg.InvocationId), nil)
	var lastSeq int64
	var seen []int64
	for {
		f, err := first.next()
		if err != nil {
			t.Fatal(err)
		}
		if f.event == "conversation.event" {
			ev := storedEvent(t, f)
			lastSeq = ev.SeqId
			seen = append(seen, ev.SeqId)
		}
		if f.event == "conversation.delta" && strings.Contains(f.data, "assistant_stream_snapshot") {
			break
		}
	}
	first.close()
	if lastSeq < 2 {
		t.Fatalf("saw stored events %v before the text", seen)
	}

	// Two reloaded pages reconnect, one by AfterSeqId, one by Last-Event-ID.
	cursor := strconv.FormatInt(lastSeq, 10)
	byQuery := e.stream(ctx, "GET", subscribePath(bg.SessionId, bg.InvocationId, "AfterSeqId", cursor), nil)
	byHeader := e.stream(ctx, "GET", subscribePath(bg.SessionId, bg.InvocationId, "AfterSeqId", "0"), nil, "Last-Event-ID", cursor)
	headerDone := make(chan followed, 1)
	go func() { headerDone <- readAll(t, byHeader) }()
	q := readAll(t, byQuery)
	h := <-headerDone

	all := e.events(bg.SessionId)
	var want []int64
	var final string
	var finalSeq int64
	for _, ev := range all {
		if ev.SeqId > lastSeq && ev.InvocationId == bg.InvocationId {
			want = append(want, ev.SeqId)
		}
		if ev.EventType == "assistant_message" {
			final, finalSeq = ev.text(), ev.SeqId
		}
	}
	for name, got := range map[string]followed{"AfterSeqId": q, "Last-Event-ID": h} {
		if !reflect.DeepEqual(seqsOf(got.stored), want) {
			t.Errorf("%s: stored %v, want exactly %v", name, seqsOf(got.stored), want)
		}
		last := got.stored[len(got.stored)-1]
		if last.EventType != "run_status" || last.status() != "completed" {
			t.Errorf("%s: ends with %+v", name, last)
		}
		// Live text: snapshots of the answer so far, growing, deltas adding up.
		if len(got.live) == 0 {
			t.Errorf("%s: no live text", name)
		}
		var acc string
		for i, l := range got.live {
			if l.EventType != "assistant_stream_snapshot" || l.InvocationId != bg.InvocationId || !strings.HasPrefix(final, l.text()) ||
				*l.SeqId < lastSeq || *l.SeqId >= finalSeq {
				t.Fatalf("%s: live frame %d %+v (final %q)", name, i, l, final)
			}
			if i == 0 {
				acc = l.text()
			} else {
				acc += l.Metadata.Delta
			}
			if acc != l.text() {
				t.Errorf("%s: deltas add up to %q, snapshot is %q", name, acc, l.text())
			}
		}
	}
}

func TestSubscribeServedFromStore(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.retention = time.Millisecond })
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	inv := e.invocation(run.SessionID, "user")
	testutil.Eventually(t, 5*time.Second, func() error {
		if _, live := e.rt.LiveRun(sessionKey(run.SessionID), inv); live {
			return errors.New("the run is still in memory")
		}
		return nil
	})
	got := readAll(t, e.stream(ctxTimeout(t, 5*time.Second), "GET", subscribePath(run.SessionID, inv, "AfterSeqId", "2"), nil))
	if !reflect.DeepEqual(seqsOf(got.stored), []int64{3, 4, 5}) {
		t.Errorf("from the store: %v", seqsOf(got.stored))
	}
}

func TestSubscribeHeartbeat(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.cfg.KeepAlive = 20 * time.Millisecond })
	var bg struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("hi"), "ModelOptions": slow(2, 120)}, &bg)
	got := readAll(t, e.stream(ctxTimeout(t, 10*time.Second), "GET", subscribePath(bg.SessionId, bg.InvocationId), nil))
	if got.heartbeats == 0 {
		t.Error("no heartbeat on an idle stream")
	}
}

func TestSubscribeRejections(t *testing.T) {
	e := newEnv(t)
	a := e.run(map[string]any{"Messages": userMessages("one")})
	b := e.run(map[string]any{"Messages": userMessages("two")})
	invA := e.invocation(a.SessionID, "user")
	for _, tc := range []struct {
		name, query string
		header      []string
		status      int
		code        string
		mentions    string
	}{
		{"no invocation", "SessionId=" + a.SessionID, nil, 400, actions.CodeMissingParameter, "InvocationId"},
		{"no session", "InvocationId=" + invA, nil, 400, actions.CodeMissingParameter, "SessionId"},
		{"bad cursor", "SessionId=" + a.SessionID + "&InvocationId=" + invA + "&AfterSeqId=abc", nil, 400, actions.CodeInvalidParameter, "AfterSeqId"},
		{"negative cursor", "SessionId=" + a.SessionID + "&InvocationId=" + invA + "&AfterSeqId=-1", nil, 400, actions.CodeInvalidParameter, "AfterSeqId"},
		{"bad Last-Event-ID", "SessionId=" + a.SessionID + "&InvocationId=" + invA, []string{"Last-Event-ID", "x1"}, 400, actions.CodeInvalidParameter, "Last-Event-ID"},
		{"unknown session", "SessionId=nope&InvocationId=" + invA, nil, 404, actions.CodeNotFound, "nope"},
		{"another user's session", "SessionId=" + a.SessionID + "&InvocationId=" + invA + "&UserId=mallory", nil, 404, actions.CodeNotFound, ""},
		{"invocation of another session", "SessionId=" + b.SessionID + "&InvocationId=" + invA, nil, 409, actions.CodeConflict, "does not belong"},
		{"unknown invocation", "SessionId=" + a.SessionID + "&InvocationId=run_nope", nil, 409, actions.CodeConflict, "run_nope"},
		{"unknown agent", "SessionId=" + a.SessionID + "&InvocationId=" + invA + "&AgentId=x", nil, 404, actions.CodeNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("GET", actions.Prefix+"SubscribeRunEvents?"+tc.query, nil, tc.header...), tc.status, tc.code, tc.mentions)
		})
	}
}

// A subscriber waits on the run's journal: while it follows a live run it reads
// nothing from the store, however long the run takes.
func TestSubscribeDoesNotPoll(t *testing.T) {
	cs := &countingStore{Store: memory.New()}
	e := newEnv(t, func(o *envOptions) {
		o.store = cs
		o.compact.Disabled = true // compaction after the run reads the history: not the subscriber
	})
	var bg struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("hello there"), "ModelOptions": slow(6, 60)}, &bg)
	s := e.stream(ctxTimeout(t, 10*time.Second), "GET", subscribePath(bg.SessionId, bg.InvocationId), nil)
	defer s.close()
	if _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	before := cs.reads()
	got := readAll(t, s)
	if n := cs.reads() - before; n != 0 {
		t.Errorf("the subscription read the store %d times while following the run", n)
	}
	if last := got.stored[len(got.stored)-1]; last.status() != "completed" {
		t.Errorf("ended with %+v", last)
	}
}
