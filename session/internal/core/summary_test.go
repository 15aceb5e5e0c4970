package core

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentengine/agentengine/session"
)

// The session row keeps a prompt's first MaxPromptRunes runes, not the whole text: a
// slice of a multi-megabyte message would keep all of it alive with the row.
func TestSummarizeKeepsOnlyThePromptsShare(t *testing.T) {
	const size = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var s session.Session
	if err := summarizeOnePrompt(&s, size); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC() // the second one frees what the first one's sweep left counted
	runtime.ReadMemStats(&after)
	if n := utf8.RuneCountInString(s.FirstPrompt); n != MaxPromptRunes || s.LastPrompt != s.FirstPrompt || s.Title == "" {
		t.Fatalf("first prompt %d runes, last prompt equal: %v, title %q", n, s.LastPrompt == s.FirstPrompt, s.Title)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > size/4 {
		t.Fatalf("the row holds %d MB after a %d MB prompt", grown>>20, size>>20)
	}
	runtime.KeepAlive(&s)
}

// summarizeOnePrompt stores one user message of size bytes into s's summary; not inlined, so that
// nothing but s outlives it on the test's stack.
//
//go:noinline
func summarizeOnePrompt(s *session.Session, size int) error {
	text := strings.Repeat("é", size/2)
	ne := session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: text})}
	ps, err := Prepare([]session.NewEvent{ne}, "")
	if err != nil {
		return err
	}
	evs, err := Assign(ps, "s", 0, time.Now())
	if err != nil {
		return err
	}
	Summarize(s, false, ps, evs, time.Now())
	return nil
}
