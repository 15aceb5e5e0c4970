package postgres_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

// BenchmarkFollowLatency: from Publish on one replica to delivery on another (a live
// event's extra delay for a follower on another replica), one event at a time.
func BenchmarkFollowLatency(b *testing.B) {
	dsn := pgtest.Schema(b)
	a, err := postgres.Open(b.Context(), dsn, postgres.WithReplicaID("a"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	f, err := postgres.Open(b.Context(), dsn, postgres.WithReplicaID("b"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	k := session.Key{App: "a", User: "u", ID: "s"}
	// Once a has seen f's announcement, its messages are sent.
	got, ready := make(chan struct{}, 1), make(chan struct{}, 1)
	a.OnFollow(func(session.Key, string) { ready <- struct{}{} })
	stop := f.Follow(k, "inv", func(msg []byte) {
		if msg != nil {
			got <- struct{}{}
		}
	})
	defer stop()
	<-ready
	msg := []byte(`[{"i":7,"k":2,"item":"msg_0123456789abcdef01234567","text":"hello "}]`)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := a.Publish(b.Context(), k, "inv", msg); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkTurnWrites: the store writes of one non-stream turn (start with two opening
// events, two appends, finish) on a session with h events of history.
func BenchmarkTurnWrites(b *testing.B) {
	for _, h := range []int{10, 10000} {
		b.Run(map[int]string{10: "history=10", 10000: "history=10000"}[h], func(b *testing.B) {
			st, err := postgres.Open(b.Context(), pgtest.Schema(b), postgres.WithoutCluster())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := b.Context()
			k := session.Key{App: "a", User: "u", ID: "s"}
			if _, err := st.CreateSession(ctx, k); err != nil {
				b.Fatal(err)
			}
			note := session.NewEvent{Type: session.TypeAssistantMessage, Data: session.MustJSON(session.AssistantMessageData{Text: "an answer of a few words"})}
			for i := 0; i < h; i += 100 {
				batch := make([]session.NewEvent, min(100, h-i))
				for j := range batch {
					batch[j] = note
				}
				if _, err := st.Append(ctx, k, batch...); err != nil {
					b.Fatal(err)
				}
			}
			user := session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: "hello there"})}
			status := func(s string) session.NewEvent {
				return session.NewEvent{Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: s})}
			}
			b.ResetTimer()
			for i := range b.N {
				inv := "run" + string(rune('a'+i%26)) + time.Now().Format("150405.000000000")
				if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: inv}, user, status(session.StatusInProgress)); err != nil {
					b.Fatal(err)
				}
				// The turn's history read (after the latest checkpoint: here none, so the
				// tail of 50) and its writes.
				if _, err := st.Events(ctx, k, session.EventQuery{Limit: 50, Tail: true}); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Append(ctx, k, note); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Append(ctx, k, note); err != nil {
					b.Fatal(err)
				}
				if _, err := st.FinishRun(ctx, k, inv, session.StatusCompleted, status(session.StatusCompleted)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatelessTurn is the store's part of a stateless client's non-stream turn,
// as the runtime makes it, one turn at a time: the run's start in a new session with the
// state read (StartRunWithState: the user message, run_status) and its end (reasoning,
// the answer, the closing run_status). The store is a replica (its cluster on), as the
// server opens it. cpu-µs/op is the process's CPU per turn (user + system).
//
// unobserved is the start of a turn its client learns of only from its answer
// (session.Run.Unobserved), which the store sends with the turn's end.
func BenchmarkStatelessTurn(b *testing.B) {
	for _, unobserved := range []bool{false, true} {
		b.Run(fmt.Sprintf("unobserved=%t", unobserved), func(b *testing.B) {
			st, err := postgres.Open(b.Context(), pgtest.Schema(b))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := b.Context()
			b.ReportAllocs()
			start := cpuTime()
			for i := 0; b.Loop(); i++ {
				k := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", i)}
				inv := fmt.Sprint("run_", i)
				user := session.NewEvent{InvocationID: inv, ItemID: "msg_u" + inv, Type: session.TypeUserMessage,
					Author: "user", Data: session.MustJSON(session.UserMessageData{Text: "hello there"})}
				if _, _, err := st.StartRunWithState(ctx, session.Run{Key: k, InvocationID: inv, ResponseID: "resp_" + inv,
					CreateSession: true, Unobserved: unobserved, Meta: json.RawMessage(`{"model":"echo-go"}`)},
					user, session.NewEvent{Type: session.TypeRunStatus, Author: "agent",
						Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})}); err != nil {
					b.Fatal(err)
				}
				if _, err := st.FinishRun(ctx, k, inv, session.StatusCompleted,
					session.NewEvent{InvocationID: inv, ItemID: "rs_" + inv, Type: session.TypeReasoning,
						Author: "agent", Data: session.MustJSON(session.ReasoningData{Text: "thinking about hello there"})},
					session.NewEvent{InvocationID: inv, ItemID: "msg_a" + inv, Type: session.TypeAssistantMessage,
						Author: "agent", Data: session.MustJSON(session.AssistantMessageData{Text: "echo: hello there"})},
					session.NewEvent{Type: session.TypeRunStatus, Author: "agent", Data: session.MustJSON(session.RunStatusData{
						Status: session.StatusCompleted, Usage: &session.Usage{InputTokens: 2, OutputTokens: 3}})}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
