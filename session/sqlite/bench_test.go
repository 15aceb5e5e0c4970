package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/sqlite"
)

func benchStore(b *testing.B) *sqlite.Store {
	b.Helper()
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "sessions.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func turnEvents(n int) []session.NewEvent {
	evs := make([]session.NewEvent, n)
	for i := range evs {
		if i%2 == 0 {
			evs[i] = msg(fmt.Sprint("user prompt number ", i, " with a little text to make it realistic"))
		} else {
			evs[i] = session.NewEvent{Type: session.TypeAssistantMessage, Author: "agent",
				Data: session.MustJSON(session.AssistantMessageData{Text: fmt.Sprint("assistant answer ", i, " with some more text")})}
		}
	}
	return evs
}

// BenchmarkAppend measures one Append transaction (batch=5 is a turn's worth of rows).
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprint("batch=", n), func(b *testing.B) {
			st := benchStore(b)
			ctx := b.Context()
			if _, err := st.CreateSession(ctx, testKey()); err != nil {
				b.Fatal(err)
			}
			evs := turnEvents(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Append(ctx, testKey(), evs...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("batch=1/parallel-sessions", func(b *testing.B) {
		st := benchStore(b)
		ctx := b.Context()
		var next atomic.Int64
		evs := turnEvents(1)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			k := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", next.Add(1))}
			if _, err := st.CreateSession(ctx, k); err != nil {
				b.Error(err)
				return
			}
			for pb.Next() {
				if _, err := st.Append(ctx, k, evs...); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkLoadHistory10k compares loading model history at 10 events with 10,000
// events behind a checkpoint (should be about equal); "full" has no checkpoint, for
// contrast.
func BenchmarkLoadHistory10k(b *testing.B) {
	cases := []struct {
		name       string
		total      int
		checkpoint bool
	}{
		{"events=10", 10, false},
		{"events=10000/checkpoint", 10_000, true},
		{"events=10000/full", 10_000, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			st := benchStore(b)
			ctx := b.Context()
			if _, err := st.CreateSession(ctx, testKey()); err != nil {
				b.Fatal(err)
			}
			head := c.total
			if c.checkpoint {
				head = c.total - 10 // then the checkpoint and 9 tail events
			}
			for done := 0; done < head; {
				n := min(500, head-done)
				if _, err := st.Append(ctx, testKey(), turnEvents(n)...); err != nil {
					b.Fatal(err)
				}
				done += n
			}
			if c.checkpoint {
				cp := session.NewEvent{Type: session.TypeContextCheckpoint, Data: session.MustJSON(
					session.ContextCheckpointData{Summary: "summary of the conversation so far", FromSeq: 1, UntilSeq: int64(head)})}
				if _, err := st.Append(ctx, testKey(), append([]session.NewEvent{cp}, turnEvents(9)...)...); err != nil {
					b.Fatal(err)
				}
			}
			var msgs int
			b.ReportAllocs()
			for b.Loop() {
				hist, _, err := session.LoadHistory(ctx, st, testKey())
				if err != nil {
					b.Fatal(err)
				}
				msgs = len(hist)
			}
			b.ReportMetric(float64(msgs), "msgs")
		})
	}
}

// BenchmarkFloorWALTx5 is the floor for BenchmarkAppend/batch=5 on the same machine and
// run: a bare database/sql transaction inserting 5 rows into a WAL file, with none of
// the store's work (lookup, indexes, summary, state). Compare ratios, not absolutes.
func BenchmarkFloorWALTx5(b *testing.B) {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(b.TempDir(), "floor.sqlite"))}
	db, err := sql.Open("sqlite3", u.String()+"?_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, s INTEGER, seq INTEGER, data TEXT, UNIQUE (s, seq))`); err != nil {
		b.Fatal(err)
	}
	ins, err := db.Prepare(`INSERT INTO t (s, seq, data) VALUES (?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	data := string(turnEvents(1)[0].Data)
	seq := 0
	b.ReportAllocs()
	for b.Loop() {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		st := tx.Stmt(ins)
		for range 5 {
			seq++
			if _, err := st.Exec(1, seq, data); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurn mimics the store traffic of one non-stream agent turn (what the host does
// for an echo-go reply: StartRun with the user message and run_status, an Append of the
// reasoning, an Append of the assistant message, FinishRun with the closing run_status)
// with 16 turns in flight on distinct sessions. "new-session" also creates the session
// per turn, as a request without a conversation does. One op is one turn.
func BenchmarkTurn(b *testing.B) {
	for _, newSession := range []bool{false, true} {
		name := "parallel=16"
		if newSession {
			name += "/new-session"
		}
		b.Run(name, func(b *testing.B) {
			st := benchStore(b)
			ctx := b.Context()
			var next atomic.Int64
			b.SetParallelism(max(1, (16+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				g := next.Add(1)
				k := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", g)}
				if !newSession {
					if _, err := st.CreateSession(ctx, k); err != nil {
						b.Error(err)
						return
					}
				}
				for i := 0; pb.Next(); i++ {
					inv := fmt.Sprint("run_", g, "_", i)
					if newSession {
						k.ID = fmt.Sprint("s", g, "_", i)
						if _, err := st.CreateSession(ctx, k); err != nil {
							b.Error(err)
							return
						}
					}
					if err := turn(ctx, st, k, inv); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// turn runs one turn's store calls, with the events the host stores for it.
func turn(ctx context.Context, st session.Store, k session.Key, inv string) error {
	user := msg("hello there")
	user.ItemID = "msg_u" + inv
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: inv, ResponseID: "resp_" + inv,
		Meta: json.RawMessage(`{"model":"echo-go"}`)},
		user, session.NewEvent{Type: session.TypeRunStatus, Author: "agent",
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

// BenchmarkStatelessTurn is the store's part of a stateless client's turn: the run's
// start (a new session, the user message, run_status) and its end (the answer, the
// closing run_status). cpu-µs/op is the process's CPU (user + system: SQLite's WAL
// writes are system time) per turn.
//
// unobserved is the start of a turn its client learns of only from its answer
// (session.Run.Unobserved), which the store commits with the turn's end. parallel=1 runs
// one turn at a time (every write a transaction of its own, as under light load);
// parallel=16 keeps 16 turns in flight, as bench/run.sh's non-stream point does.
func BenchmarkStatelessTurn(b *testing.B) {
	for _, unobserved := range []bool{false, true} {
		for _, parallel := range []int{1, 16} {
			b.Run(fmt.Sprintf("unobserved=%t/parallel=%d", unobserved, parallel), func(b *testing.B) {
				benchStatelessTurn(b, unobserved, parallel)
			})
		}
	}
}

func benchStatelessTurn(b *testing.B, unobserved bool, parallel int) {
	st := benchStore(b)
	ctx := b.Context()
	b.ReportAllocs()
	var next atomic.Int64
	turn := func() error {
		i := next.Add(1)
		k := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", i)}
		inv := fmt.Sprint("run_", i)
		user := msg("hello there")
		user.ItemID = "msg_u" + inv
		if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: inv, ResponseID: "resp_" + inv, CreateSession: true,
			Unobserved: unobserved, Meta: json.RawMessage(`{"model":"echo-go"}`)},
			user, session.NewEvent{Type: session.TypeRunStatus, Author: "agent",
				Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})}); err != nil {
			return err
		}
		_, err := st.FinishRun(ctx, k, inv, session.StatusCompleted,
			session.NewEvent{InvocationID: inv, ItemID: "rs_" + inv, Type: session.TypeReasoning,
				Author: "agent", Data: session.MustJSON(session.ReasoningData{Text: "thinking about hello there"})},
			session.NewEvent{InvocationID: inv, ItemID: "msg_a" + inv, Type: session.TypeAssistantMessage,
				Author: "agent", Data: session.MustJSON(session.AssistantMessageData{Text: "echo: hello there"})},
			session.NewEvent{Type: session.TypeRunStatus, Author: "agent", Data: session.MustJSON(session.RunStatusData{
				Status: session.StatusCompleted, Usage: &session.Usage{InputTokens: 2, OutputTokens: 3}})})
		return err
	}
	start := cpuTime()
	if parallel == 1 {
		for b.Loop() {
			if err := turn(); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(max(1, (parallel+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := turn(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
