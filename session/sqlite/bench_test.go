package sqlite_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

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
