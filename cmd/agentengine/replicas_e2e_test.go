package main_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Two agentengine replicas (the real binary, each with its own echo-go runner) share one
// Postgres session store. Needs a server: AGENTENGINE_TEST_PG_DSN (scripts/pg-test.sh).

// pgSchema returns a DSN of a new, empty schema on the test server (dropped afterwards),
// or skips without a server (fails when AGENTENGINE_TEST_PG_REQUIRED is set).
func pgSchema(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("AGENTENGINE_TEST_PG_DSN")
	if dsn == "" {
		msg := "no PostgreSQL test server: set AGENTENGINE_TEST_PG_DSN (scripts/pg-test.sh run go test ...)"
		if os.Getenv("AGENTENGINE_TEST_PG_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "e2e_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("AGENTENGINE_TEST_PG_DSN must be a URL here: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// startReplicas starts two servers on one schema with a short replica lease.
func startReplicas(t *testing.T) (a, b *server) {
	t.Helper()
	dsn := pgSchema(t)
	t.Setenv("KSADK_SESSION_BACKEND", "postgres")
	t.Setenv("KSADK_SESSION_DSN", dsn)
	t.Setenv("AGENTENGINE_REPLICA_LEASE", "1500ms")
	return startServer(t, copyProject(t)), startServer(t, copyProject(t))
}

// sseStream reads a response stream event by event.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

func openStream(t *testing.T, resp *http.Response) *sseStream {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// until reads events until one of type typ; it returns the events read, that one last.
func (s *sseStream) until(t *testing.T, typ string) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for {
		ev, err := readSSE(s.r)
		if err != nil {
			t.Fatalf("stream ended (%v) before %s; read %d events", err, typ, len(evs))
		}
		evs = append(evs, ev)
		if ev.Type == typ {
			return evs
		}
	}
}

// rest reads the stream to its end and returns the last event's type and the text deltas.
func (s *sseStream) rest() (last string, deltas int) {
	for {
		ev, err := readSSE(s.r)
		if err != nil {
			return last, deltas
		}
		last = ev.Type
		if ev.Type == "response.output_text.delta" {
			deltas++
		}
	}
}

func longTurn(t *testing.T, s *server, extra map[string]any) (*sseStream, string) {
	t.Helper()
	body := map[string]any{"model": "echo-go", "input": "a long answer", "stream": true,
		"model_options": map[string]any{"deltas": 3000, "delay_ms": 5}}
	for k, v := range extra {
		body[k] = v
	}
	st := openStream(t, post(t, s.url+"/v1/responses", body))
	created := st.until(t, "response.created")
	id := created[len(created)-1].Data["response"].(map[string]any)["id"].(string)
	st.until(t, "response.output_text.delta")
	return st, id
}

func follow(t *testing.T, s *server, id string) *sseStream {
	t.Helper()
	resp, err := http.Get(s.url + "/v1/responses/" + id + "?stream=true")
	if err != nil {
		t.Fatal(err)
	}
	return openStream(t, resp)
}

func TestReplicasFollowAndCancelAcrossReplicas(t *testing.T) {
	a, b := startReplicas(t)
	onA, id := longTurn(t, a, nil)

	// B streams A's run live: text deltas arrive while A is still producing them.
	fromB := follow(t, b, id)
	fromB.until(t, "response.output_text.delta")
	fromB.until(t, "response.output_text.delta")

	// A second run on the same session is refused on both replicas alike.
	for _, s := range []*server{a, b} {
		resp := post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "again", "previous_response_id": id})
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict {
			t.Errorf("second run on a busy session via %s: status %d, want 409", s.url, resp.StatusCode)
		}
	}

	// A cancel sent to B stops the run on A.
	resp := post(t, b.url+"/v1/responses/"+id+"/cancel", map[string]any{})
	got := decode(t, resp)
	if got["status"] != "cancelled" {
		t.Errorf("cancel via B: status %v", got["status"])
	}
	if last, _ := onA.rest(); last != "response.incomplete" {
		t.Errorf("A's stream ended with %q, want response.incomplete (cancelled)", last)
	}
	if last, _ := fromB.rest(); last != "response.incomplete" {
		t.Errorf("B's stream ended with %q, want response.incomplete (cancelled)", last)
	}
	if st := getJSON(t, a.url+"/v1/responses/"+id)["status"]; st != "cancelled" {
		t.Errorf("A reports status %v", st)
	}

	// An interrupt raised on A is approved through B, and the run resumes there.
	first := decode(t, post(t, a.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "please approve deleting notes.txt"}))
	var aprID string
	for _, it := range first["output"].([]any) {
		if m := it.(map[string]any); m["type"] == "mcp_approval_request" {
			aprID, _ = m["id"].(string)
		}
	}
	if aprID == "" {
		t.Fatalf("no approval request from A: %v", first)
	}
	second := decode(t, post(t, b.url+"/v1/responses", map[string]any{"model": "echo-go", "previous_response_id": first["id"],
		"input": []any{map[string]any{"type": "mcp_approval_response", "approval_request_id": aprID, "approve": true}}}))
	if second["status"] != "completed" {
		t.Fatalf("approval via B: %v", second)
	}
	out, _ := json.Marshal(second["output"])
	if !strings.Contains(string(out), "notes.txt") {
		t.Errorf("the resumed run on B did not carry out the approved call: %s", out)
	}
}

func TestReplicaKilledMidRunIsInterruptedAndTheSessionContinues(t *testing.T) {
	a, b := startReplicas(t)
	_, id := longTurn(t, a, nil)
	fromB := follow(t, b, id)
	fromB.until(t, "response.output_text.delta")

	a.kill() // kill -9: no clean shutdown, its lease just stops being renewed

	// B's follower learns the end from the survivor that interrupts the run.
	done := make(chan string, 1)
	go func() { last, _ := fromB.rest(); done <- last }()
	select {
	case last := <-done:
		if last != "response.failed" {
			t.Errorf("B's stream ended with %q, want response.failed (interrupted)", last)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("B's stream of the dead replica's run did not end; B's log:\n%s", b.logs)
	}
	r := getJSON(t, b.url+"/v1/responses/"+id)
	msg, _ := r["error"].(map[string]any)["message"].(string)
	if r["status"] != "failed" || !strings.Contains(msg, "replica") {
		t.Errorf("after A died, B reports status %v, error %q", r["status"], msg)
	}

	// The session continues on B.
	next := decode(t, post(t, b.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "hello again",
		"previous_response_id": id}))
	if next["status"] != "completed" {
		t.Fatalf("next turn on B: %v", next)
	}
}

func getJSON(t *testing.T, u string) map[string]any {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, resp)
}

func TestMigrateCreatesThenKeepsTheSchema(t *testing.T) {
	dsn := pgSchema(t)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binPath, append([]string{"migrate"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("--dsn", dsn); err != nil || !strings.Contains(out, "migrated from version 0 to") {
		t.Fatalf("first migrate: %v\n%s", err, out)
	}
	if out, err := run("--dsn", dsn); err != nil || !strings.Contains(out, "is current") {
		t.Fatalf("second migrate: %v\n%s", err, out)
	}
	out, err := run("--dsn", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if err == nil || !strings.Contains(out, "DSN from --dsn") {
		t.Fatalf("migrate of an unreachable database: %v\n%s", err, out)
	}
}
