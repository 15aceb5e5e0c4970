package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is a Responses API stand-in whose behaviour each test chooses.
func fake(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprint(w, e)
		w.(http.Flusher).Flush()
	}
}

func TestNonStreamCountsAndChecks(t *testing.T) {
	var n atomic.Int64
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // drained only so the client can reuse the connection
		switch n.Add(1) % 4 {
		case 0:
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		case 1:
			fmt.Fprint(w, `{"id":"resp_1","status":"failed","output":[{"status":"completed"}]}`)
		default:
			fmt.Fprint(w, `{"id":"resp_1","status": "completed","output":[]}`)
		}
	})
	res, err := Run(context.Background(), Config{URL: url, Scenario: NonStream, Concurrency: 2, Requests: 40, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 40 || res.OK != 20 || res.Errors != 20 {
		t.Fatalf("requests %d ok %d errors %d", res.Requests, res.OK, res.Errors)
	}
	if len(res.ErrorSamples) != 2 || res.Latency == nil || res.Latency.N != 20 || res.TurnsPerSec <= 0 {
		t.Fatalf("%+v", res)
	}
}

func TestStreamParsing(t *testing.T) {
	const withNames = "event: response.created\ndata: {\"type\":\"response.created\"}\n\n" +
		"event: response.reasoning_summary_text.delta\ndata: {}\n\n" +
		"event: response.output_text.delta\ndata: {}\n\n" +
		"event: response.output_text.delta\r\ndata: {}\r\n\r\n" +
		": keep-alive\n\n" +
		"event: response.completed\ndata: {}\n\n"
	// Without "event:" lines the type comes from the JSON; one data line longer than the
	// reader's buffer.
	long := strings.Repeat("x", 100<<10)
	const noNames = "data: {\"type\":\"response.created\"}\n\n" +
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"a\"}\n\n"
	var n atomic.Int64
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			sse(w, withNames)
		case 1:
			sse(w, noNames, `data: {"type":"response.completed","response":{"text":"`+long+"\"}}\n\n")
		case 2:
			sse(w, noNames) // ends without response.completed
		case 3:
			sse(w, noNames, "event: response.failed\ndata: {}\n\n")
		}
	})
	res, err := Run(context.Background(), Config{URL: url, Scenario: Stream, Requests: 8, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 4 || res.Errors != 4 {
		t.Fatalf("ok %d errors %d: %v", res.OK, res.Errors, res.ErrorSamples)
	}
	if res.DeltasPerTurn != 1.5 || res.FirstDelta == nil || res.TTFB == nil {
		t.Fatalf("deltas per turn %v, %+v", res.DeltasPerTurn, res)
	}
	joined := strings.Join(res.ErrorSamples, "|")
	if !strings.Contains(joined, "without response.completed") || !strings.Contains(joined, "response.failed") {
		t.Fatalf("error samples %q", joined)
	}
}

func TestRequestBody(t *testing.T) {
	d := newDriver(Config{Model: "m", Input: "hi"})
	got := string(d.body(true, "conv1", 1000, 5))
	want := `{"conversation":"conv1","input":"hi","model":"m","model_options":{"delay_ms":5,"deltas":1000},"stream":true}`
	if got != want {
		t.Fatalf("body %s", got)
	}
	if got := string(d.body(false, "", 0, 0)); got != `{"input":"hi","model":"m","stream":false}` {
		t.Fatalf("body %s", got)
	}
}

func TestHistorySeedsAndMeasures(t *testing.T) {
	var mu = make(chan struct{}, 1)
	perConv := map[string]int{}
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		conv := strings.SplitN(strings.SplitN(string(b), `"conversation":"`, 2)[1], `"`, 2)[0]
		mu <- struct{}{}
		perConv[conv]++
		<-mu
		fmt.Fprint(w, `{"status":"completed"}`)
	})
	// 10 events of history at 5 per turn: 2 seeding turns per conversation, and one
	// measured turn per conversation (history may only grow by 20%).
	res, err := Run(context.Background(), Config{URL: url, Scenario: History, History: 10, Requests: 4, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 4 || res.History.Conversations != 4 || res.History.SeedTurns != 8 || len(perConv) != 4 {
		t.Fatalf("%+v %+v %v", res, res.History, perConv)
	}
	for c, n := range perConv {
		if n != 3 {
			t.Errorf("conversation %s got %d turns, want 3", c, n)
		}
	}
	// 1,000 events: one conversation serves up to 40 measured turns.
	clear(perConv)
	res, err = Run(context.Background(), Config{URL: url, Scenario: History, History: 1000, Requests: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.History.Conversations != 2 || res.History.SeedTurns != 400 || res.OK != 50 || res.History.MaxEvents != 1000+39*5 {
		t.Fatalf("%+v", res.History)
	}
}

func TestStreamsHoldsThemOpen(t *testing.T) {
	release := make(chan struct{})
	var open atomic.Int64
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sse(w, "event: response.created\ndata: {}\n\n")
		if strings.Contains(string(b), `"delay_ms"`) && open.Add(1) == 50 {
			// Every stream has its first event; give the client time to read them.
			time.AfterFunc(time.Second, func() { close(release) })
		}
		if strings.Contains(string(b), `"delay_ms"`) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		sse(w, "event: response.output_text.delta\ndata: {}\n\nevent: response.completed\ndata: {}\n\n")
	})
	res, err := Run(context.Background(), Config{URL: url, Scenario: Streams, Streams: 50, Deltas: 1, DelayMS: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Streams.Completed != 50 || res.Streams.MaxOpen != 50 || res.Streams.AllOpenMS <= 0 || res.Errors != 0 {
		t.Fatalf("%+v %+v", res, res.Streams)
	}
}

func TestRefusesRemoteAndBadConfig(t *testing.T) {
	for _, c := range []Config{
		{URL: "http://example.com:8080"},
		{URL: "http://10.0.0.1:8080"},
		{URL: "ftp://127.0.0.1"},
		{URL: "http://127.0.0.1:1", Scenario: "nope"},
		{Scenario: Idle},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1", Warmup: 1, Requests: 1, RequestTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), "warmup") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestProcParsing(t *testing.T) {
	line := []byte("1234 (we(ird) name) S 77 1 1 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 8 0 100 1000 200\n")
	ppid, ut, st, err := parseStat(line)
	if err != nil || ppid != 77 || ut != 250 || st != 30 {
		t.Fatalf("%d %d %d %v", ppid, ut, st, err)
	}
	if _, _, _, err := parseStat([]byte("garbage")); err == nil {
		t.Fatal("no error")
	}
	if kb := statusKB([]byte("Name:\tx\nVmRSS:\t   12345 kB\nVmHWM:\t2 kB\n"), "VmRSS:"); kb != 12345 {
		t.Fatalf("rss %d", kb)
	}
	st2, err := readStat(os.Getpid())
	if err != nil || st2.rssKB <= 0 {
		t.Fatalf("self: %+v %v", st2, err)
	}
}

func TestIdleSamplesProcess(t *testing.T) {
	res, err := Run(context.Background(), Config{Scenario: Idle, PID: os.Getpid(), Duration: 120 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Server == nil || res.Server.Error != "" || res.Server.RSSAfterMB <= 0 || res.Server.RSSPeakMB < res.Server.RSSAfterMB {
		t.Fatalf("%+v", res.Server)
	}
	var b strings.Builder
	res.WriteText(&b)
	if !strings.Contains(b.String(), "rss") {
		t.Fatalf("text: %s", b.String())
	}
}

func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(ds)
	if p.P50 != 50 || p.P90 != 90 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 || p.N != 100 {
		t.Fatalf("%+v", p)
	}
	if percentiles(nil) != nil {
		t.Fatal("empty")
	}
	if s := topStatus([]byte(`{"id":"x","status" : "completed"}`)); s != "" {
		// A space before the colon is not what any server sends; keep the check simple.
		t.Logf("status %q", s)
	}
}

// A paced run sends no request before its time on the schedule: the k-th of them no
// sooner than k/rate seconds after the run began (a slow machine only sends later).
func TestRatePacesRequests(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		fmt.Fprint(w, `{"id":"resp_1","status":"completed","output":[]}`)
	})
	const rate, n = 200.0, 20
	begin := time.Now()
	res, err := Run(context.Background(), Config{URL: url, Scenario: NonStream, Concurrency: 4, Requests: n, Rate: rate, Warmup: -1})
	if err != nil || res.OK != n {
		t.Fatalf("%v, %+v", err, res)
	}
	slices.SortFunc(at, time.Time.Compare)
	for k := range at {
		if earliest := time.Duration(float64(k) / rate * float64(time.Second)); at[k].Sub(begin) < earliest {
			t.Errorf("request %d came %v after the run began, before its time on the schedule (%v)", k, at[k].Sub(begin), earliest)
		}
	}
	if _, err := Run(context.Background(), Config{URL: url, Scenario: NonStream, Requests: 1, Rate: -1}); err == nil {
		t.Error("a negative rate was accepted")
	}
}

func TestResponsesExpect(t *testing.T) {
	var n atomic.Int64
	url := fake(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		text := "you said hello there"
		if n.Add(1)%2 == 0 {
			text = "something else"
		}
		if strings.Contains(r.Header.Get("Accept"), "event-stream") {
			sse(w, "event: response.output_text.delta\ndata: {\"delta\":\""+text+"\"}\n\n", "event: response.completed\ndata: {}\n\n")
			return
		}
		fmt.Fprintf(w, `{"status":"completed","output":[{"content":[{"text":%q}]}]}`, text)
	})
	for _, sc := range []Scenario{NonStream, Stream} {
		res, err := Run(context.Background(), Config{URL: url, Scenario: sc, Expect: "you said hello", Requests: 10, Warmup: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK != 5 || res.Errors != 5 {
			t.Fatalf("%s: ok %d errors %d: %v", sc, res.OK, res.Errors, res.ErrorSamples)
		}
	}
}
