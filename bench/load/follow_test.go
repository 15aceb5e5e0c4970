package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// followPair serves a "replica" that streams turns and another that follows them: the
// follower's GET receives every text delta the streaming replica sends after it joined
// (the first one dropped with dropFirst).
func followPair(t *testing.T, deltas int, dropFirst bool) (streamURL, followURL string) {
	t.Helper()
	var mu sync.Mutex
	joined := map[string]chan chan string{}
	var next int
	wait := func(id string) chan chan string {
		mu.Lock()
		defer mu.Unlock()
		if joined[id] == nil {
			joined[id] = make(chan chan string, 1)
		}
		return joined[id]
	}
	streamURL = fake(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		next++
		id := fmt.Sprintf("resp_%d", next)
		mu.Unlock()
		sse(w, fmt.Sprintf("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":%q}}\n\n", id))
		var follower chan string
		select {
		case follower = <-wait(id):
		case <-time.After(5 * time.Second):
			return
		}
		const delta = "event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n"
		for i := range deltas {
			time.Sleep(time.Millisecond)
			sse(w, delta)
			if !(dropFirst && i == 0) {
				follower <- delta
			}
		}
		const done = "event: response.completed\ndata: {}\n\n"
		sse(w, done)
		follower <- done
		close(follower)
	})
	followURL = fake(t, func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v1/responses/")
		if r.Method != http.MethodGet || r.URL.Query().Get("stream") != "true" {
			http.Error(w, "want GET ?stream=true", http.StatusBadRequest)
			return
		}
		ch := make(chan string, deltas+1)
		sse(w, fmt.Sprintf("event: response.created\ndata: {\"response\":{\"id\":%q}}\n\n", id))
		wait(id) <- ch
		for e := range ch {
			sse(w, e)
		}
	})
	return streamURL, followURL
}

func TestFollowMeasuresEveryDeltaOnTheFollower(t *testing.T) {
	streamURL, followURL := followPair(t, 20, false)
	res, err := Run(context.Background(), Config{URL: streamURL, FollowURL: followURL, Scenario: Follow, Requests: 4, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Follow
	if res.OK != 4 || res.Errors != 0 || f == nil || f.Missing != 0 || f.Extra != 0 {
		t.Fatalf("ok %d errors %v follow %+v", res.OK, res.ErrorSamples, f)
	}
	if f.Latency == nil || f.Latency.N != 80 || f.Join == nil || f.Join.N != 4 {
		t.Fatalf("latency %+v join %+v", f.Latency, f.Join)
	}
}

func TestFollowCountsDeltasMissingOnTheFollower(t *testing.T) {
	streamURL, followURL := followPair(t, 5, true)
	res, err := Run(context.Background(), Config{URL: streamURL, FollowURL: followURL, Scenario: Follow, Requests: 3, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 0 || res.Errors != 3 || len(res.ErrorSamples) == 0 || !strings.Contains(res.ErrorSamples[0], "follower received 4 text deltas, the streaming client 5") {
		t.Fatalf("ok %d errors %d %v", res.OK, res.Errors, res.ErrorSamples)
	}
	if res.Follow == nil || res.Follow.Missing != 3 {
		t.Fatalf("follow %+v", res.Follow)
	}
}

func TestFollowNeedsAFollowURL(t *testing.T) {
	if _, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1", Scenario: Follow}); err == nil || !strings.Contains(err.Error(), "follow URL") {
		t.Fatalf("err = %v", err)
	}
}
