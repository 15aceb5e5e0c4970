package history

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/sqlite"
)

// The cached history equals a fresh projection of the store after every kind of
// change: new turns, tool calls answered later, a context checkpoint, attachment refs,
// and the session deleted and created again.
func TestHistoryCacheMatchesProjection(t *testing.T) {
	ctx := t.Context()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	for _, tc := range []struct {
		name  string
		store session.Store
	}{{"memory", memory.New()}, {"sqlite", sq}} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(tc.store)
			key := session.Key{App: "a", User: "u", ID: "s"}
			if _, err := tc.store.CreateSession(ctx, key); err != nil {
				t.Fatal(err)
			}
			user := func(text, inv string) session.NewEvent {
				return session.NewEvent{InvocationID: inv, Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(session.UserMessageData{Text: text})}
			}
			steps := [][]session.NewEvent{
				{user("one", "i1"), {InvocationID: "i1", Type: session.TypeAssistantMessage, Data: session.MustJSON(session.AssistantMessageData{Text: "reply one"})}},
				{user("two", "i2"), {InvocationID: "i2", Type: session.TypeToolCall, ItemID: "fc_1", Data: session.MustJSON(session.ToolCallData{CallID: "c1", Name: "lookup", Arguments: "{}"})}},
				// A client's result without a name, a turn later: named after the call.
				{{InvocationID: "i3", Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: "c1", Output: "42"})}},
				{{InvocationID: "i4", Type: session.TypeAttachmentRef, Author: "user", Data: json.RawMessage(`{"file_id":"file_1","filename":"a.txt"}`)}, user("three", "i4")},
				{{Type: session.TypeContextCheckpoint, Data: session.MustJSON(session.ContextCheckpointData{Summary: "so far", UntilSeq: 3})}},
				{user("four", "i5"), {InvocationID: "i5", Type: session.TypeReasoning, Data: session.MustJSON(session.ReasoningData{Text: "hm"})}},
			}
			// check compares the cache with a fresh projection after a step's events
			// (ran) were stored: first as after a run (extend, then compaction's size
			// check), then as at the next turn's start.
			check := func(step int, ran []session.Event) {
				t.Helper()
				want, _, err := session.LoadHistory(ctx, tc.store, key)
				if err != nil {
					t.Fatal(err)
				}
				wantTokens := 0
				for _, m := range want {
					wantTokens += EstimateTokens(m.Content)
				}
				n, tokens, err := c.SizeOf(ctx, key, c.Extend(key, ran))
				if err != nil || n != len(want) || tokens != wantTokens {
					t.Errorf("step %d: history size %d messages %d tokens (%v), want %d, %d", step, n, tokens, err, len(want), wantTokens)
				}
				sess, err := tc.store.GetSession(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				hist, refs, err := c.ForTurn(ctx, &sess, sess.LastSeq+1, nil, 0, true)
				if err != nil {
					t.Fatal(err)
				}
				got := hist.AppendTo(nil)
				if len(got) != hist.size {
					t.Errorf("step %d: history of %d bytes said to be %d", step, len(got), hist.size)
				}
				wantJSON, _ := json.Marshal(append([]session.Message{}, want...))
				if string(got) != string(wantJSON) {
					t.Errorf("step %d: history\n got %s\nwant %s", step, got, wantJSON)
				}
				wantRefs, err := tc.store.Events(ctx, key, session.EventQuery{Types: []string{session.TypeAttachmentRef}, Tail: true, Limit: MaxRefs})
				if err != nil || len(refs) != len(wantRefs) {
					t.Errorf("step %d: %d attachment refs, want %d (%v)", step, len(refs), len(wantRefs), err)
				}
			}
			check(0, nil)
			for i, evs := range steps {
				stored, err := tc.store.Append(ctx, key, evs...)
				if err != nil {
					t.Fatal(err)
				}
				if i%3 == 2 {
					stored = nil // not seen by a run here: read from the store
				}
				check(i+1, stored)
			}
			// A session deleted and created again under the same key starts empty.
			if err := tc.store.DeleteSession(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.store.CreateSession(ctx, key); err != nil {
				t.Fatal(err)
			}
			stored, err := tc.store.Append(ctx, key, user("fresh", "i9"))
			if err != nil {
				t.Fatal(err)
			}
			check(len(steps)+1, stored)
		})
	}
}

// The cache stays within its entry bound.
func TestHistoryCacheBounded(t *testing.T) {
	var c Cache
	for i := range histCacheEntries + 10 {
		c.put(session.Key{App: "a", User: "u", ID: string(rune('a'+i%26)) + string(rune(i))}, &entry{size: 10})
	}
	if n := len(c.entries); n > histCacheEntries {
		t.Fatalf("%d entries, bound %d", n, histCacheEntries)
	}
	if c.bytes != 10*len(c.entries) {
		t.Fatalf("bytes %d for %d entries", c.bytes, len(c.entries))
	}
}

// EvictIdle lets go of the entries of sessions idle since the cutoff and keeps the
// others, with their bytes accounted.
func TestCacheEvictsIdleEntries(t *testing.T) {
	c := New(memory.New())
	idle, active := session.Key{App: "a", User: "u", ID: "idle"}, session.Key{App: "a", User: "u", ID: "active"}
	c.put(idle, &entry{size: 10})
	c.put(active, &entry{size: 7})
	cutoff := time.Now().Add(-30 * time.Second)
	c.entries[idle].used = cutoff.Add(-time.Second)
	if more := c.EvictIdle(cutoff); !more {
		t.Error("EvictIdle reports no entry left")
	}
	if c.entries[idle] != nil || c.entries[active] == nil || c.bytes != 7 {
		t.Fatalf("after the trim: %d entries, %d bytes", len(c.entries), c.bytes)
	}
}

// A run whose events would make the session's entry outgrow the cache drops the entry
// without encoding them, and still reports the history's size; the next turn reads the
// history from the store.
func TestHistoryCacheDropsAnOversizedEntry(t *testing.T) {
	ctx := t.Context()
	st := memory.New()
	c := New(st)
	key := session.Key{App: "a", User: "u", ID: "s"}
	sess, err := st.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ForTurn(ctx, &sess, 1, nil, 0, true); err != nil { // the first turn's entry
		t.Fatal(err)
	}
	c.entryBytes = 1 << 20
	huge := strings.Repeat("x", c.entryBytes/2+1)
	ran, err := st.Append(ctx, key, session.NewEvent{InvocationID: "i1", Type: session.TypeUserMessage, Author: "user",
		Data: session.MustJSON(session.UserMessageData{Text: huge})})
	if err != nil {
		t.Fatal(err)
	}
	size := c.Extend(key, ran)
	if size.through != 1 || size.msgs != 1 || size.tokens != EstimateTokens(huge) {
		t.Errorf("size %+v", size)
	}
	if e := c.take(key); e != nil {
		t.Errorf("an oversized entry was kept (%d bytes)", e.size)
	}
	sess, _ = st.GetSession(ctx, key)
	hist, _, err := c.ForTurn(ctx, &sess, sess.LastSeq+1, nil, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := hist.AppendTo(nil); !strings.Contains(string(got), huge[:100]) || len(got) < len(huge) {
		t.Errorf("history after the drop: %d bytes", len(got))
	}
}

// A first turn's bound is never below the history it bounds.
func TestFirstTurnBoundIsAnUpperBound(t *testing.T) {
	user := func(text string, items ...string) session.NewEvent {
		d := session.UserMessageData{Text: text}
		for _, it := range items {
			d.Items = append(d.Items, json.RawMessage(it))
		}
		return session.NewEvent{InvocationID: "i1", Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(d)}
	}
	for name, evs := range map[string][]session.NewEvent{
		"a text turn": {user("hello there"), {InvocationID: "i1", Type: session.TypeAssistantMessage, Data: session.MustJSON(session.AssistantMessageData{Text: "you said hello there"})}},
		"CJK":         {user(strings.Repeat("漢字かなカナ한글", 40))},
		"a transcript": {user("now", `{"role":"user","content":"a"}`, `{"role":"assistant","content":"b"}`,
			`{"type":"function_call","call_id":"c","name":"a_rather_long_tool_name_of_sixty_four_characters_0123456789abcd","arguments":"{}"}`,
			`{"type":"function_call_output","call_id":"c","output":"1"}`)},
		"tool calls": {user("go"),
			{InvocationID: "i1", Type: session.TypeToolCall, Data: session.MustJSON(session.ToolCallData{CallID: "c1", Name: "a_rather_long_tool_name_of_sixty_four_characters_0123456789abcd", Arguments: "{}"})},
			{InvocationID: "i1", Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: "c1", Output: "1"})},
			{InvocationID: "i1", Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: "c1", Output: "2"})}},
	} {
		ctx := t.Context()
		st := memory.New()
		key := session.Key{App: "a", User: "u", ID: "s"}
		if _, err := st.CreateSession(ctx, key); err != nil {
			t.Fatal(err)
		}
		ran, err := st.Append(ctx, key, evs...)
		if err != nil {
			t.Fatal(err)
		}
		msgs := session.Project(ran)
		tokens := 0
		for _, m := range msgs {
			tokens += EstimateTokens(m.Content)
		}
		if b := New(st).Extend(key, ran); b.through != ran[len(ran)-1].Seq || b.msgs < len(msgs) || b.tokens < tokens {
			t.Errorf("%s: bound %+v under the history's %d messages, %d tokens", name, b, len(msgs), tokens)
		}
	}
}
