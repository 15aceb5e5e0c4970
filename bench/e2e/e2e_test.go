// Package e2e_test runs bench/load against the real agentengine stack (host runtime, the
// api router and a session store) served on 127.0.0.1 in this process: tests check that
// the load generator reads agentengine's responses correctly, and benchmarks give a CPU
// profile of the server's turn path (go test -bench . -cpuprofile cpu.out ./bench/e2e).
package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/bench/load"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/sqlite"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(m.Run())
}

const agent = "echo-go"

// serve runs the runtime with store and runner behind the api router on 127.0.0.1.
func serve(tb testing.TB, store session.Store, runner runnerv1.RunnerClient) string {
	tb.Helper()
	rt, err := host.New(host.Config{Store: store, Agents: []host.Agent{{Name: agent, Framework: "go", Runner: runner}}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := rt.Recover(context.Background()); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt})}}))
	tb.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
	})
	return srv.URL
}

func inProcessRunner(tb testing.TB) runnerv1.RunnerClient {
	c, stop := inprocess.Serve(echoagent.New())
	tb.Cleanup(stop)
	return c
}

// subprocessRunner builds examples/echo-go and runs it under the host's supervisor, as
// `agentengine run` does.
func subprocessRunner(tb testing.TB) runnerv1.RunnerClient {
	tb.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("needs the go command to build examples/echo-go")
	}
	bin := filepath.Join(tb.TempDir(), "echo-go")
	if out, err := exec.Command(goTool, "build", "-o", bin, "../../examples/echo-go").CombinedOutput(); err != nil {
		tb.Fatalf("build echo-go: %v\n%s", err, out)
	}
	s := runnerproc.New(runnerproc.Config{Name: agent, Command: []string{bin}})
	tb.Cleanup(func() { _ = s.Close(context.Background()) })
	if err := s.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

func sqliteStore(tb testing.TB) session.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "sessions.sqlite"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// postgresStore opens the Postgres store (with its cluster, as a replica) on a new
// schema of the server AGENTENGINE_TEST_PG_DSN names (scripts/pg-test.sh run ...).
func postgresStore(tb testing.TB, dsn string) session.Store {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(ctx, u.String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// stores are the stores the benchmarks run on: memory, SQLite, and Postgres when
// AGENTENGINE_TEST_PG_DSN names a server.
func stores(tb testing.TB) map[string]func() session.Store {
	m := map[string]func() session.Store{
		"memory": func() session.Store { return memory.New() },
		"sqlite": func() session.Store { return sqliteStore(tb) },
	}
	if dsn := os.Getenv("AGENTENGINE_TEST_PG_DSN"); dsn != "" {
		m["postgres"] = func() session.Store { return postgresStore(tb, dsn) }
	}
	return m
}

// TestLoadReadsAgentengine runs every scenario briefly against agentengine and expects
// no errors: the load generator understands the server's responses and streams.
func TestLoadReadsAgentengine(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			url := serve(t, open(), inProcessRunner(t))
			ctx := context.Background()
			check := func(cfg load.Config) *load.Result {
				t.Helper()
				cfg.URL = url
				res, err := load.Run(ctx, cfg)
				if err != nil {
					t.Fatalf("%s: %v", cfg.Scenario, err)
				}
				if res.Errors != 0 || res.OK == 0 {
					t.Fatalf("%s: ok %d, errors %v", cfg.Scenario, res.OK, res.ErrorSamples)
				}
				return res
			}
			check(load.Config{Scenario: load.NonStream, Concurrency: 4, Requests: 40, PID: os.Getpid()})
			if res := check(load.Config{Scenario: load.Stream, Deltas: 100, Requests: 5}); res.DeltasPerTurn != 100 || res.FirstDelta == nil {
				t.Errorf("stream: %v deltas per turn", res.DeltasPerTurn)
			}
			if res := check(load.Config{Scenario: load.History, History: 50, Requests: 12, Concurrency: 2}); res.History.SeedErrors != 0 {
				t.Errorf("history: %+v", res.History)
			}
			if res := check(load.Config{Scenario: load.Streams, Streams: 40, Deltas: 3, DelayMS: 20}); res.Streams.Completed != 40 {
				t.Errorf("streams: %+v", res.Streams)
			}
		})
	}
}

// TestEventsPerTurn pins load.DefaultEventsPerTurn, which the history scenario uses to
// seed a conversation with a given number of events, to what agentengine stores.
func TestEventsPerTurn(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			store := open()
			url := serve(t, store, inProcessRunner(t))
			for range 3 {
				resp, err := http.Post(url+"/v1/responses", "application/json",
					strings.NewReader(`{"model":"echo-go","input":"hello there","conversation":"count-me"}`))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
				}
			}
			s, err := store.GetSession(context.Background(), session.Key{App: agent, User: "user", ID: "count-me"})
			if err != nil {
				t.Fatal(err)
			}
			if s.LastSeq != 3*load.DefaultEventsPerTurn {
				t.Fatalf("3 turns stored %d events, want %d (update load.DefaultEventsPerTurn)", s.LastSeq, 3*load.DefaultEventsPerTurn)
			}
		})
	}
}

// post sends one turn and reads the whole response.
func post(b *testing.B, client *http.Client, url, body string) {
	resp, err := client.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("HTTP %d: %v", resp.StatusCode, err)
	}
}

// BenchmarkTurn measures turns through the whole server with the echo-go runner as a
// real subprocess: non-stream turns with 16 in flight, and 1000-delta streams.
func BenchmarkTurn(b *testing.B) {
	runner := subprocessRunner(b)
	for name, open := range stores(b) {
		url := serve(b, open(), runner)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, Proxy: nil}}
		b.Run(name+"/nonstream", func(b *testing.B) {
			b.SetParallelism(8) // 16 in flight on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					post(b, client, url, `{"model":"echo-go","input":"hello there"}`)
				}
			})
		})
		b.Run(name+"/stream1000", func(b *testing.B) {
			for b.Loop() {
				post(b, client, url, `{"model":"echo-go","input":"hello there","stream":true,"model_options":{"deltas":1000}}`)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/delta")
		})
	}
}

// BenchmarkHistory measures non-stream turns on a conversation that already holds about
// 2,000 events (400 seeding turns, not timed), for a profile of what grows with history.
func BenchmarkHistory(b *testing.B) {
	runner := subprocessRunner(b)
	for name, open := range stores(b) {
		b.Run(name+"/h2000", func(b *testing.B) {
			url := serve(b, open(), runner)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, Proxy: nil}}
			body := `{"model":"echo-go","input":"hello there","conversation":"long-` + name + `"}`
			for range 2000 / load.DefaultEventsPerTurn {
				post(b, client, url, body)
			}
			for b.Loop() {
				post(b, client, url, body)
			}
		})
	}
}

// BenchmarkLargeInput measures what a 20 MiB text input costs the host (the runner is
// a subprocess, not counted): bytes allocated per input byte, the memory a large
// request needs at its peak being a fraction of that.
func BenchmarkLargeInput(b *testing.B) {
	const size = 20 << 20
	runner := subprocessRunner(b)
	url := serve(b, memory.New(), runner)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	body, err := json.Marshal(map[string]any{"model": agent, "input": strings.Repeat("x", size)})
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		post(b, client, url, string(body))
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "alloc/input-byte")
}

// TestOpenStreamsProfile holds BENCH_PROFILE_STREAMS streams open on the host (memory
// store, echo-go as a subprocess runner) and, once all are open (and BENCH_PROFILE_WAIT
// later, e.g. 6s: near the streams' end, when their journals are longest), writes heap and
// goroutine profiles to BENCH_PROFILE_DIR (default the test's temp dir) and logs the
// host's heap per open stream. The load generator runs in this process too: its own allocations are
// in package bench/load, apart in the profile (pprof -focus / -ignore).
//
//	BENCH_PROFILE_STREAMS=2000 BENCH_PROFILE_DIR=/tmp/sp go test -run OpenStreamsProfile -v ./bench/e2e
//	go tool pprof -sample_index=inuse_space -top -ignore 'bench/load|net/http\.\(\*persistConn\)' /tmp/sp/heap.pprof
func TestOpenStreamsProfile(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BENCH_PROFILE_STREAMS"))
	if n <= 0 {
		t.Skip("a profiling harness: set BENCH_PROFILE_STREAMS")
	}
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	url := serve(t, memory.New(), subprocessRunner(t))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	done := make(chan *load.Result, 1)
	go func() {
		res, err := load.Run(context.Background(), load.Config{URL: url, Scenario: load.Streams, Streams: n, Deltas: 40, DelayMS: 250, Warmup: -1, Timeout: 2 * time.Minute})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// All open: the goroutine count stops growing for a second, with at least the
	// client's two connection goroutines a stream (a busy machine may not have started
	// the load for a second).
	last, still := 0, 0
	for still < 10 || last-g0 < 2*n {
		time.Sleep(100 * time.Millisecond)
		if g := runtime.NumGoroutine(); g == last {
			still++
		} else {
			last, still = g, 0
		}
	}
	// BENCH_PROFILE_WAIT (a duration) waits that much longer: the runs' journals and
	// stored snapshots grow until the streams end.
	if d, err := time.ParseDuration(os.Getenv("BENCH_PROFILE_WAIT")); err == nil {
		time.Sleep(d)
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	for _, name := range []string{"heap", "goroutine"} {
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	res := <-done
	if res == nil || res.Streams.Completed != n {
		t.Fatalf("streams: %+v", res)
	}
	t.Logf("%d streams: %d goroutines (%.1f a stream, with the client's); heap in use %.1f → %.1f MB, stacks %.1f → %.1f MB; %.1f KB heap + %.1f KB stack a stream (with the client's); profiles in %s",
		n, last-g0, float64(last-g0)/float64(n), mbOf(before.HeapInuse), mbOf(during.HeapInuse), mbOf(before.StackInuse), mbOf(during.StackInuse),
		float64(during.HeapInuse-before.HeapInuse)/1024/float64(n), float64(during.StackInuse-before.StackInuse)/1024/float64(n), dir)
}

func mbOf(b uint64) float64 { return float64(b) / (1 << 20) }

// BenchmarkTurnTracing is BenchmarkTurn's non-stream turn (memory store) served as
// `agentengine run` serves it with tracing off, with the recent traces kept in memory,
// and with those and an OTLP/HTTP exporter to a local sink: for CPU and allocation
// profiles of what tracing adds (-bench 'TurnTracing/otlp' -cpuprofile ...). Two more
// modes split the kept traces' cost: "http-only" (the HTTP server span alone) and
// "turn-only" (the turn's own spans, no HTTP server span).
func BenchmarkTurnTracing(b *testing.B) {
	runner := subprocessRunner(b)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	for _, mode := range []string{"off", "kept", "otlp", "http-only", "turn-only"} {
		b.Run(mode, func(b *testing.B) {
			var tr *tracing.Tracing
			if mode != "off" {
				env := map[string]string{}
				if mode == "otlp" {
					env["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.URL
					b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL) // the exporter reads it itself
				}
				var err error
				tr, err = tracing.New(context.Background(), tracing.Config{Getenv: func(k string) string { return env[k] }, Recent: tracing.NewRecent(0, 0)})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
			}
			cfg := host.Config{Store: memory.New(), Agents: []host.Agent{{Name: agent, Framework: "go", Runner: runner}}}
			if tr != nil && mode != "http-only" {
				cfg.Tracer = tr.Tracer()
			}
			rt, err := host.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Trace: serverSpans(mode, tr), Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt})}}))
			b.Cleanup(func() {
				srv.Close()
				_ = rt.Close(context.Background())
			})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, Proxy: nil}}
			b.ReportAllocs()
			b.SetParallelism(8) // 16 in flight on 2 cores
			cpu0 := processCPU(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					post(b, client, srv.URL, `{"model":"echo-go","input":"hello there"}`)
				}
			})
			// CPU per turn (server and client, not the runner) is steadier than the
			// time per turn on a shared machine.
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the CPU time this process has used (user and system).
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverSpans is the HTTP middleware of BenchmarkTurnTracing's mode (none for turn-only).
func serverSpans(mode string, tr *tracing.Tracing) gin.HandlerFunc {
	if mode == "turn-only" {
		return nil
	}
	return tr.Middleware()
}
