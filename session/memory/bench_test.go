package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// BenchmarkTurn mimics the store traffic of one non-stream agent turn (StartRun with the
// user message and run_status, Appends of the reasoning and the assistant message,
// FinishRun with the closing run_status) with 16 turns in flight on distinct sessions.
// One op is one turn.
func BenchmarkTurn(b *testing.B) {
	st := memory.New()
	defer st.Close()
	ctx := b.Context()
	var next atomic.Int64
	b.SetParallelism(max(1, (16+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		g := next.Add(1)
		for i := 0; pb.Next(); i++ {
			// A fresh session per turn, as a request without a conversation does; it also
			// keeps the memory store's event slices from growing across the run.
			k := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", g, "_", i)}
			if _, err := st.CreateSession(ctx, k); err != nil {
				b.Error(err)
				return
			}
			if err := turn(ctx, st, k, fmt.Sprint("run_", g, "_", i)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func turn(ctx context.Context, st session.Store, k session.Key, inv string) error {
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: inv, ResponseID: "resp_" + inv,
		Meta: json.RawMessage(`{"model":"echo-go"}`)},
		session.NewEvent{Type: session.TypeUserMessage, Author: "user", ItemID: "msg_u" + inv,
			Data: session.MustJSON(session.UserMessageData{Text: "hello there"})},
		session.NewEvent{Type: session.TypeRunStatus, Author: "agent",
			Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})}); err != nil {
		return fmt.Errorf("StartRun: %w", err)
	}
	if _, err := st.Append(ctx, k, session.NewEvent{InvocationID: inv, ItemID: "rs_" + inv, Type: session.TypeReasoning,
		Author: "agent", Data: session.MustJSON(session.ReasoningData{Text: "thinking about hello there"})}); err != nil {
		return fmt.Errorf("Append reasoning: %w", err)
	}
	if _, err := st.Append(ctx, k, session.NewEvent{InvocationID: inv, ItemID: "msg_a" + inv, Type: session.TypeAssistantMessage,
		Author: "agent", Data: session.MustJSON(session.AssistantMessageData{Text: "echo: hello there"})}); err != nil {
		return fmt.Errorf("Append assistant message: %w", err)
	}
	if _, err := st.FinishRun(ctx, k, inv, session.StatusCompleted, session.NewEvent{Type: session.TypeRunStatus,
		Author: "agent", Data: session.MustJSON(session.RunStatusData{Status: session.StatusCompleted,
			Usage: &session.Usage{InputTokens: 2, OutputTokens: 3}})}); err != nil {
		return fmt.Errorf("FinishRun: %w", err)
	}
	return nil
}

// BenchmarkKeptSessions measures what the store's kept sessions cost the collector: it
// stores 100,000 one-turn sessions, then times full collections (one op is one) and
// reports the heap objects and bytes each kept session adds. The memory store keeps
// every session it is given, so each object and pointer of a session is work for every
// collection for the rest of the process.
func BenchmarkKeptSessions(b *testing.B) {
	const sessions = 100_000
	ctx := b.Context()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st := memory.New()
	for i := range sessions {
		k := session.Key{App: "app", User: fmt.Sprint("u", i%100), ID: fmt.Sprint("s", i)}
		if _, err := st.CreateSession(ctx, k); err != nil {
			b.Fatal(err)
		}
		if err := turn(ctx, st, k, fmt.Sprint("run_", i)); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(float64(after.HeapObjects-before.HeapObjects)/sessions, "objects/session")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/sessions, "B/session")
	runtime.KeepAlive(st)
}
