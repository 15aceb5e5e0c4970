package storetest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentengine/agentengine/session"
)

func testSummary(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	created := mustCreate(t, st, k)
	long := "  " + strings.Repeat("é", 100) + "\n" + strings.Repeat("日本", 300)
	mustAppend(t, st, k, userMsg(long))
	s1 := mustGet(t, st, k)
	if n := utf8.RuneCountInString(s1.FirstPrompt); n != 512 || !utf8.ValidString(s1.FirstPrompt) || !strings.HasPrefix(long, s1.FirstPrompt) {
		t.Errorf("FirstPrompt has %d runes (valid %v)", n, utf8.ValidString(s1.FirstPrompt))
	}
	if n := utf8.RuneCountInString(s1.Title); n != 80 || strings.ContainsAny(s1.Title, "\n") || strings.HasPrefix(s1.Title, " ") {
		t.Errorf("Title = %q (%d runes)", s1.Title, n)
	}
	if s1.LastPrompt != s1.FirstPrompt || s1.LastSeq != 1 || !s1.CreatedAt.Equal(created.CreatedAt) || !s1.UpdatedAt.After(created.UpdatedAt) {
		t.Errorf("after first prompt: %+v", s1)
	}

	image := session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{
		Content: []session.ContentBlock{{Type: "input_image", ImageURL: "data:image/png;base64,AA=="}}})}
	mustAppend(t, st, k, userMsg("second"), image, runStatus("inv7", session.StatusInProgress))
	s2 := mustGet(t, st, k)
	if s2.FirstPrompt != s1.FirstPrompt || s2.Title != s1.Title || s2.LastPrompt != "second" {
		t.Errorf("prompts after second message: %+v", s2)
	}
	if s2.ActiveInvocationID != "inv7" || s2.ActiveRunStatus != session.StatusInProgress || s2.LastSeq != 4 {
		t.Errorf("run fields: %+v", s2)
	}
	if !s2.UpdatedAt.After(s1.UpdatedAt) {
		t.Errorf("UpdatedAt did not advance: %v -> %v", s1.UpdatedAt, s2.UpdatedAt)
	}
	mustAppend(t, st, k, runStatus("inv7", session.StatusFailed),
		session.NewEvent{Type: session.TypeContextCheckpoint, Data: session.MustJSON(session.ContextCheckpointData{Summary: "s", FromSeq: 1, UntilSeq: 4})})
	if s3 := mustGet(t, st, k); s3.ActiveRunStatus != session.StatusFailed || s3.CheckpointSeq != 6 {
		t.Errorf("after checkpoint: %+v", s3)
	}
}

// countingStore records the event queries LoadHistory makes.
type countingStore struct {
	session.Store
	mu      sync.Mutex
	queries []session.EventQuery
	read    int
}

func (c *countingStore) Events(ctx context.Context, k session.Key, q session.EventQuery) ([]session.Event, error) {
	evs, err := c.Store.Events(ctx, k, q)
	c.mu.Lock()
	c.queries = append(c.queries, q)
	c.read += len(evs)
	c.mu.Unlock()
	return evs, err
}

func testCheckpointHistory(t *testing.T, st session.Store) {
	ctx := ctxOf(t)
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	reasoning := session.NewEvent{Type: session.TypeReasoning, Data: session.MustJSON(session.ReasoningData{Text: "hmm"})}
	tool := session.NewEvent{Type: session.TypeToolCall, Data: session.MustJSON(session.ToolCallData{CallID: "c", Name: "f", Arguments: "{}"})}
	result := session.NewEvent{Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: "c", Name: "f", Output: "ok"})}
	checkpoint := func(from, until int64) session.NewEvent {
		return session.NewEvent{Type: session.TypeContextCheckpoint, Data: session.MustJSON(
			session.ContextCheckpointData{Summary: fmt.Sprint("sum", until), FromSeq: from, UntilSeq: until})}
	}
	mustAppend(t, st, k,
		userMsg("q1"), runStatus("i1", session.StatusInProgress), reasoning, assistantMsg("a1"), // 1-4
		runStatus("i1", session.StatusCompleted), userMsg("q2"), tool, result, assistantMsg("a2")) // 5-9
	hist := loadHistory(t, st, k)
	assertHistory(t, "before checkpoint", hist, []string{"user:q1", "assistant:a1", "user:q2", "tool_call", "tool_result", "assistant:a2"})

	var filler []session.NewEvent
	for i := 10; i < 40; i++ {
		filler = append(filler, assistantMsg(fmt.Sprint("f", i)))
	}
	mustAppend(t, st, k, filler...) // 10-39
	mustAppend(t, st, k,
		session.NewEvent{Type: session.TypeCompactionBound, Data: session.MustJSON(session.CompactionBoundaryData{CompactedUntilSeq: 38})},
		checkpoint(1, 38), userMsg("q3"), reasoning, assistantMsg("a3"), runStatus("i2", session.StatusCompleted)) // 40-45
	cs := &countingStore{Store: st}
	hist, sess, err := session.LoadHistory(ctx, cs, k)
	if err != nil {
		t.Fatal(err)
	}
	if sess.CheckpointSeq != 41 {
		t.Errorf("CheckpointSeq = %d, want 41", sess.CheckpointSeq)
	}
	// The checkpoint replaces 1..38; f39 sits between the covered range and the checkpoint.
	assertHistory(t, "after checkpoint", hist, []string{"assistant:sum38", "assistant:f39", "user:q3", "assistant:a3"})
	for _, q := range cs.queries {
		if q.AfterSeq < 30 {
			t.Errorf("LoadHistory read from seq %d: the cost grows with the log", q.AfterSeq+1)
		}
	}
	if cs.read > 12 {
		t.Errorf("LoadHistory read %d events, want about the checkpoint and its tail", cs.read)
	}

	// A later checkpoint covering less than an earlier one.
	mustAppend(t, st, k, checkpoint(1, 20), userMsg("q4")) // 46-47
	assertHistory(t, "after a second checkpoint", loadHistory(t, st, k),
		[]string{"assistant:sum20", "assistant:sum38", "assistant:f39", "user:q3", "assistant:a3", "user:q4"})

	// A checkpoint that leaves a long uncovered stretch before it: all of it still counts.
	k2 := key("app", "u1", "gap")
	mustCreate(t, st, k2)
	mustAppend(t, st, k2, filler...)                       // 1-30
	mustAppend(t, st, k2, checkpoint(1, 10), userMsg("q")) // 31-32
	if got := loadHistory(t, st, k2); len(got) != 22 || got[1].Content != "f20" || got[21].Content != "q" {
		t.Errorf("history with an uncovered stretch: %d messages", len(got))
	}
}

// loadHistory loads history and checks it against projecting the whole log, which is
// what reading from the checkpoint must be equivalent to.
func loadHistory(t *testing.T, st session.Store, k session.Key) []session.Message {
	t.Helper()
	hist, _, err := session.LoadHistory(ctxOf(t), st, k)
	if err != nil {
		t.Fatal(err)
	}
	full := session.Project(mustEvents(t, st, k, session.EventQuery{}))
	if !reflect.DeepEqual(hist, full) {
		t.Errorf("LoadHistory = %+v\nprojecting the whole log = %+v", hist, full)
	}
	return hist
}

func assertHistory(t *testing.T, what string, hist []session.Message, want []string) {
	t.Helper()
	var got []string
	for _, m := range hist {
		if m.Type == session.TypeRunStatus || m.Type == session.TypeReasoning {
			t.Errorf("%s: %s entered history", what, m.Type)
		}
		switch m.Type {
		case session.TypeToolCall, session.TypeToolResult:
			got = append(got, m.Type)
		default:
			got = append(got, m.Role+":"+m.Content)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s: history = %v, want %v", what, got, want)
	}
}
