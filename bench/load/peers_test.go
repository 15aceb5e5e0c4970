package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeLangGraph speaks the LangGraph server's thread and run routes; a run on a thread
// that was not created is a 404, and every fourth run answers badly in the way bad
// says (the run's number is passed).
func fakeLangGraph(t *testing.T, bad func(w http.ResponseWriter, stream bool, n int64) bool) (string, *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	threads := map[string]bool{}
	var created, runs atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /threads", func(w http.ResponseWriter, r *http.Request) {
		id := fmt.Sprintf("th-%d", created.Add(1))
		mu.Lock()
		threads[id] = true
		mu.Unlock()
		fmt.Fprintf(w, `{"thread_id":%q,"status":"idle"}`, id)
	})
	run := func(stream bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			ok := threads[r.PathValue("id")]
			delete(threads, r.PathValue("id")) // a thread per turn: a second run on it is a test failure
			mu.Unlock()
			if !ok {
				http.Error(w, `{"detail":"Thread not found"}`, http.StatusNotFound)
				return
			}
			var req struct {
				AssistantID string `json:"assistant_id"`
				Input       struct {
					Messages []struct{ Role, Content string } `json:"messages"`
				} `json:"input"`
				StreamMode []string `json:"stream_mode"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.AssistantID != "echo" || len(req.Input.Messages) != 1 ||
				req.Input.Messages[0].Content != "hello there" || stream != (len(req.StreamMode) == 1) {
				http.Error(w, `{"detail":"bad request"}`, http.StatusUnprocessableEntity)
				return
			}
			if bad(w, stream, runs.Add(1)) {
				return
			}
			answer := `{"messages":[{"type":"human","content":"hello there"},{"type":"ai","content":"you said hello there"}]}`
			if stream {
				sse(w, "event: metadata\ndata: {\"run_id\":\"r1\"}\n\n", "event: values\ndata: "+answer+"\n\n")
				return
			}
			fmt.Fprint(w, answer)
		}
	}
	mux.HandleFunc("POST /threads/{id}/runs/wait", run(false))
	mux.HandleFunc("POST /threads/{id}/runs/stream", run(true))
	return fake(t, mux.ServeHTTP), &created
}

func TestLangGraphAPI(t *testing.T) {
	url, created := fakeLangGraph(t, func(w http.ResponseWriter, stream bool, n int64) bool {
		switch n % 4 {
		case 1: // the run failed
			if stream {
				sse(w, "event: metadata\ndata: {}\n\n", "event: error\ndata: {\"error\":\"boom\"}\n\n")
			} else {
				fmt.Fprint(w, `{"__error__":{"error":"ValueError","message":"boom"}}`)
			}
			return true
		case 2: // an answer without the expected text
			if stream {
				sse(w, "event: metadata\ndata: {}\n\n", "event: values\ndata: {\"messages\":[]}\n\n")
			} else {
				fmt.Fprint(w, `{"messages":[]}`)
			}
			return true
		}
		return false
	})
	for _, sc := range []Scenario{NonStream, Stream} {
		t.Run(string(sc), func(t *testing.T) {
			before := created.Load()
			res, err := Run(context.Background(), Config{URL: url, API: APILangGraph, Model: "echo", Expect: "you said hello there",
				Scenario: sc, Concurrency: 2, Requests: 40, Warmup: -1})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != 20 || res.Errors != 20 {
				t.Fatalf("ok %d errors %d: %v", res.OK, res.Errors, res.ErrorSamples)
			}
			if got := created.Load() - before; got != 40 {
				t.Fatalf("%d threads for 40 turns", got)
			}
			joined := strings.Join(res.ErrorSamples, "|")
			if !strings.Contains(joined, `lacks "you said hello there"`) && !strings.Contains(joined, `without "you said hello there"`) {
				t.Fatalf("error samples %q", joined)
			}
			if sc == Stream && (res.TTFB == nil || res.FirstDelta == nil || res.EventsPerTurn != 2) {
				t.Fatalf("stream timings %+v", res)
			}
		})
	}
}

// fakeADK speaks ADK's web server routes: sessions, /run and /run_sse.
func fakeADK(t *testing.T, bad func(w http.ResponseWriter, stream bool, n int64) bool) (string, *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	sessions := map[string]bool{}
	var created, runs atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apps/{app}/users/{user}/sessions", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("app") != "echo_adk" || r.PathValue("user") != benchUser {
			http.Error(w, `{"detail":"not found"}`, http.StatusNotFound)
			return
		}
		id := fmt.Sprintf("s-%d", created.Add(1))
		mu.Lock()
		sessions[id] = true
		mu.Unlock()
		fmt.Fprintf(w, `{"id":%q,"appName":"echo_adk","userId":"bench","state":{},"events":[]}`, id)
	})
	run := func(stream bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				AppName    string `json:"app_name"`
				UserID     string `json:"user_id"`
				SessionID  string `json:"session_id"`
				NewMessage struct {
					Role  string
					Parts []struct{ Text string }
				} `json:"new_message"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.AppName != "echo_adk" || req.UserID != benchUser ||
				req.NewMessage.Role != "user" || len(req.NewMessage.Parts) != 1 || req.NewMessage.Parts[0].Text != "hello there" {
				http.Error(w, `{"detail":"bad request"}`, http.StatusUnprocessableEntity)
				return
			}
			mu.Lock()
			ok := sessions[req.SessionID]
			delete(sessions, req.SessionID)
			mu.Unlock()
			if !ok {
				http.Error(w, `{"detail":"Session not found"}`, http.StatusNotFound)
				return
			}
			if bad(w, stream, runs.Add(1)) {
				return
			}
			ev := `{"author":"assistant","content":{"role":"model","parts":[{"text":"You said: hello there"}]}}`
			if stream {
				sse(w, "data: "+ev+"\n\n")
				return
			}
			fmt.Fprint(w, "["+ev+"]")
		}
	}
	mux.HandleFunc("POST /run", run(false))
	mux.HandleFunc("POST /run_sse", run(true))
	return fake(t, mux.ServeHTTP), &created
}

func TestADKAPI(t *testing.T) {
	url, created := fakeADK(t, func(w http.ResponseWriter, stream bool, n int64) bool {
		switch n % 4 {
		case 1: // the run failed
			if stream {
				sse(w, "data: {\"error\": \"boom\"}\n\n")
			} else {
				fmt.Fprint(w, `[{"author":"assistant","errorCode":"X","errorMessage":"boom"}]`)
			}
			return true
		case 2: // nothing useful
			if stream {
				sse(w, "")
			} else {
				fmt.Fprint(w, `[]`)
			}
			return true
		}
		return false
	})
	for _, sc := range []Scenario{NonStream, Stream} {
		t.Run(string(sc), func(t *testing.T) {
			before := created.Load()
			res, err := Run(context.Background(), Config{URL: url + "/", API: APIADK, Model: "echo_adk", Expect: "You said: hello there",
				Scenario: sc, Concurrency: 3, Requests: 40, Warmup: -1})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != 20 || res.Errors != 20 {
				t.Fatalf("ok %d errors %d: %v", res.OK, res.Errors, res.ErrorSamples)
			}
			if got := created.Load() - before; got != 40 {
				t.Fatalf("%d sessions for 40 turns", got)
			}
			if sc == Stream && (res.TTFB == nil || res.EventsPerTurn != 1) {
				t.Fatalf("stream timings %+v", res)
			}
		})
	}
	// A wrong app name fails at the session, with the server's status.
	res, err := Run(context.Background(), Config{URL: url, API: APIADK, Model: "other", Requests: 2, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 0 || !strings.Contains(strings.Join(res.ErrorSamples, "|"), "create session: HTTP 404") {
		t.Fatalf("%+v", res)
	}
}

func TestPeerAPIValidation(t *testing.T) {
	for _, c := range []Config{
		{URL: "http://127.0.0.1:1", API: "grpc"},
		{URL: "http://127.0.0.1:1", API: APILangGraph, Scenario: History, Requests: 1},
		{URL: "http://127.0.0.1:1", API: APIADK, Scenario: Streams},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Fatalf("%+v: no error", c)
		}
	}
}
