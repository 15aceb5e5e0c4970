package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

// drainStream starts a streamed turn and returns a channel with the whole stream.
func drainStream(t *testing.T, url, body string) <-chan string {
	t.Helper()
	resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	out := make(chan string, 1)
	r := bufio.NewReader(resp.Body)
	// The first event proves the run is under way before the signal.
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer resp.Body.Close()
		rest, _ := io.ReadAll(r)
		out <- first + string(rest)
	}()
	return out
}

func terminals(stream string) []string {
	var out []string
	for _, line := range strings.Split(stream, "\n") {
		ev, ok := strings.CutPrefix(line, "event: ")
		if ok && (ev == "response.completed" || ev == "response.failed" || ev == "response.incomplete") {
			out = append(out, ev)
		}
	}
	return out
}

// SIGTERM drains: new connections are refused at once, a run in progress finishes
// normally within the drain timeout, and the process then exits.
func TestSIGTERMLetsRunsFinish(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--drain-timeout", "30s")
	stream := drainStream(t, s.url, `{"model":"echo-go","stream":true,"input":"one two three four","model_options":{"delay_ms":400}}`)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stopped accepting: a new connection is refused (give the signal a moment to land).
	testutil.Eventually(t, 5*time.Second, func() error {
		resp, err := http.Get(s.url + "/health")
		if err != nil {
			return nil
		}
		resp.Body.Close()
		return errors.New("still accepting connections after SIGTERM")
	})
	got := <-stream
	if ts := terminals(got); len(ts) != 1 || ts[0] != "response.completed" {
		t.Fatalf("terminal events %v, want one response.completed:\n%s", ts, got)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a drained server exits cleanly: %v\n%s", err, s.logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still running after its runs finished:\n%s", s.logs)
	}
}

// A run longer than the drain timeout ends interrupted, with one terminal event.
func TestSIGTERMInterruptsRunsAfterTheDrainTimeout(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--drain-timeout", "500ms")
	stream := drainStream(t, s.url, `{"model":"echo-go","stream":true,"input":"one two three four five six seven eight","model_options":{"delay_ms":1000}}`)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	got := <-stream
	if ts := terminals(got); len(ts) != 1 || ts[0] == "response.completed" {
		t.Fatalf("terminal events %v, want one that is not completed:\n%s", ts, got)
	}
	if !strings.Contains(got, "host_shutdown") && !strings.Contains(got, "shut down") {
		t.Errorf("the terminal event does not say the host shut down:\n%s", got)
	}
}

// Host names other than loopback ones are refused (DNS rebinding) unless --allow-host
// names them, as a reverse proxy that keeps the client's Host needs.
func TestAllowHostFlag(t *testing.T) {
	get := func(url, host string) int {
		req, _ := http.NewRequest("GET", url+"/v1/models", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	plain := startServer(t, copyProject(t), "--session-backend", "memory")
	if code := get(plain.url, "agents.example"); code != http.StatusForbidden {
		t.Errorf("unlisted host: %d, want 403", code)
	}
	allowed := startServer(t, copyProject(t), "--session-backend", "memory", "--allow-host", "agents.example")
	if code := get(allowed.url, "agents.example"); code != http.StatusOK {
		t.Errorf("allowed host: %d, want 200", code)
	}
	if code := get(allowed.url, "other.example"); code != http.StatusForbidden {
		t.Errorf("other host: %d, want 403", code)
	}
}

// --tokens: each key of the file is accepted and acts as its user.
func TestTokensFlag(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(keys, []byte("alice-key-0123456789 alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--tokens", keys)
	call := func(key string) (int, string) {
		req, _ := http.NewRequest("POST", s.url+"/v1/responses", strings.NewReader(`{"model":"echo-go","input":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-AgentEngine-User", "mallory")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := call(""); code != http.StatusUnauthorized {
		t.Errorf("no key: %d %s", code, b)
	}
	code, b := call("alice-key-0123456789")
	if code != http.StatusOK {
		t.Fatalf("alice's key: %d %s", code, b)
	}
	var r struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(b), &r)
	// The session is alice's, not the user the header claimed.
	list, err := http.Get(s.url + "/apps/echo-go/users/alice/sessions/" + r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	list.Body.Close()
	if list.StatusCode != http.StatusUnauthorized {
		t.Errorf("unauthenticated ADK read: %d", list.StatusCode)
	}
	req, _ := http.NewRequest("GET", s.url+"/apps/echo-go/users/alice/sessions/"+r.SessionID, nil)
	req.Header.Set("Authorization", "Bearer alice-key-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("alice reading her session over ADK: %d", resp.StatusCode)
	}
}

// With --token, run prints a one-time login URL; opening it gives the browser a cookie
// that lets it use the UI and the API.
func TestTokenPrintsABrowserLoginURL(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--token", "s3cret-token")
	var login string
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, line := range strings.Split(s.logs.String(), "\n") {
			if _, u, ok := strings.Cut(line, "Browser login"); ok {
				login = u[strings.Index(u, "http://"):]
				return nil
			}
		}
		return fmt.Errorf("no login URL printed:\n%s", s.logs)
	})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(strings.TrimSpace(login))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly {
		t.Fatalf("login: %d %v", resp.StatusCode, cookies)
	}
	for _, path := range []string{"/", "/v1/models"} {
		req, _ := http.NewRequest("GET", s.url+path, nil)
		req.AddCookie(cookies[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the login cookie: %d", path, resp.StatusCode)
		}
	}
}

// A 5 MiB input goes through the runner subprocess (over gRPC's default 4 MiB message
// limit) and back; a body over the request limit is 413 naming the limit.
func TestLargeInputsWorkOrNameTheLimit(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	post := func(input string) (int, []byte) {
		b, _ := json.Marshal(map[string]any{"model": "echo-go", "input": input})
		resp, err := http.Post(s.url+"/v1/responses", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	big := strings.Repeat("x", 5<<20)
	code, b := post(big)
	if code != http.StatusOK {
		t.Fatalf("5 MiB input: %d %.300s", code, b)
	}
	var r struct {
		OutputText string `json:"output_text"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "completed" || r.OutputText != "Echo: "+big {
		t.Fatalf("5 MiB input: status %q, %d bytes of output, %v", r.Status, len(r.OutputText), err)
	}
	code, b = post(strings.Repeat("x", 33<<20))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "limit of 32 MiB") {
		t.Errorf("33 MiB input: %d %.300s", code, b)
	}
}

// The first Ctrl-C drains; a second one exits at once, ending the runs in flight as
// interrupted, each with exactly one terminal event, recorded in the store.
func TestSecondSIGINTExitsAtOnce(t *testing.T) {
	project := copyProject(t)
	db := filepath.Join(t.TempDir(), "s.sqlite")
	s := startServer(t, project, "--session-path", db, "--drain-timeout", "10m")
	body := `{"model":"echo-go","stream":true,"input":"one two three four five six seven eight nine ten","model_options":{"delay_ms":5000}}`
	first, second := drainStream(t, s.url, body), drainStream(t, s.url, body)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The first interrupt is taken (the server says how to force it) before the second.
	testutil.Eventually(t, 10*time.Second, func() error {
		if !strings.Contains(s.logs.String(), "Ctrl-C again to stop them now") {
			return errors.New("no shutdown notice yet")
		}
		return nil
	})
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a forced exit is still a clean one: %v\n%s", err, s.logs)
		}
	case <-time.After(60 * time.Second): // far below the 10m drain the first Ctrl-C allowed
		t.Fatalf("a second SIGINT did not end the process:\n%s", s.logs)
	}
	for i, stream := range []<-chan string{first, second} {
		got := <-stream
		if ts := terminals(got); len(ts) != 1 || ts[0] == "response.completed" {
			t.Fatalf("run %d: terminal events %v, want one that is not completed:\n%s", i, ts, got)
		}
	}
	// The store has each run ended once, interrupted.
	out, err := runCLI(t, project, "", "sessions", "list", "--session-path", db)
	if err != nil {
		t.Fatalf("sessions list: %v\n%s", err, out)
	}
	ids := regexp.MustCompile(`\b(conv_|sess_)?[0-9a-zA-Z_-]{16,}\b`).FindAllString(out, -1)
	ended := 0
	for _, id := range ids {
		exp, err := runCLI(t, project, "", "sessions", "export", id, "--session-path", db)
		if err != nil {
			continue // not a session id
		}
		n := strings.Count(exp, `"status":"interrupted"`)
		if n != 1 || strings.Contains(exp, `"status":"completed"`) || strings.Contains(exp, `"status":"failed"`) {
			t.Fatalf("session %s: %d interrupted ends:\n%s", id, n, exp)
		}
		ended++
	}
	if ended != 2 {
		t.Fatalf("found %d sessions with an interrupted run, want 2:\n%s", ended, out)
	}
}
