package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A line the host logs during a traced turn carries the turn's trace and span ids (a
// failing agent's error here), in JSON when the logger writes JSON.
func TestTurnLogLinesJoinTheTrace(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var logs lockedBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Debug})
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: serve(t, echoagent.New())}},
		Logger: log, Tracer: tp.Tracer("test")})
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "echo", Input: text("fail")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var turn sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if strings.HasPrefix(s.Name(), "invoke_agent") {
			turn = s
		}
	}
	if turn == nil {
		t.Fatalf("no invoke_agent span among %d", len(spans.Ended()))
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if rec["@message"] != "agent reported an error" {
			continue
		}
		found = true
		if rec["trace_id"] != turn.SpanContext().TraceID().String() || rec["span_id"] != turn.SpanContext().SpanID().String() {
			t.Errorf("log line %v does not name the turn's span %s/%s", rec, turn.SpanContext().TraceID(), turn.SpanContext().SpanID())
		}
	}
	if !found {
		t.Fatalf("no error line in:\n%s", logs.String())
	}
	if got := turn.Status().Code.String(); got != "Error" {
		t.Errorf("failed turn's span status %s", got)
	}
}

// A turn that stops for an approval says so on its span.
func TestApprovalWaitIsOnTheTurnSpan(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: serve(t, echoagent.New())}},
		Tracer: tp.Tracer("test")})
	r, err := rt.Start(context.Background(), host.TurnRequest{App: "echo", Input: text("please approve the deletion")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range spans.Ended() {
		if !strings.HasPrefix(s.Name(), "invoke_agent") {
			continue
		}
		for _, ev := range s.Events() {
			if ev.Name == "approval_request" {
				return
			}
		}
		t.Fatalf("turn span events %v", s.Events())
	}
	t.Fatal("no turn span")
}

// The turn's span has ended when its run's end is published: a client that reads the
// kept traces as soon as the run's stream shows its end (ADK's dev UI does) finds the
// turn. Each turn is checked the moment its stored run_status is seen.
func TestTurnSpanEndsBeforeTheRunEnds(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: serve(t, echoagent.New())}},
		Tracer: tp.Tracer("test")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 10 {
		r, err := rt.Start(ctx, host.TurnRequest{App: "echo", Input: text("use the tool on paris")})
		if err != nil {
			t.Fatal(err)
		}
		sub := r.Subscribe(0)
		for {
			e, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("turn %d: no stored end before %v", i+1, err)
			}
			var st session.RunStatusData
			if e.Kind == host.KindStored && e.Stored.Type == session.TypeRunStatus &&
				json.Unmarshal(e.Stored.Data, &st) == nil && st.Status != session.StatusInProgress {
				break
			}
		}
		ended := 0
		for _, s := range spans.Ended() {
			if strings.HasPrefix(s.Name(), "invoke_agent") {
				ended++
			}
		}
		if ended != i+1 {
			t.Fatalf("turn %d ended, %d invoke_agent spans ended", i+1, ended)
		}
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The turn's span names the model its usage came from; tool arguments and results are
// on the host's execute_tool span only with content capture on.
func TestToolSpanContentIsOptIn(t *testing.T) {
	for _, capture := range []bool{false, true} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: serve(t, echoagent.New())}},
			Tracer: tp.Tracer("test"), TraceContent: capture})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := rt.Start(ctx, host.TurnRequest{App: "echo", Input: text("use the tool on paris")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		attrs := map[string]map[string]string{}
		for _, s := range spans.Ended() {
			m := map[string]string{}
			for _, kv := range s.Attributes() {
				m[string(kv.Key)] = kv.Value.String()
			}
			attrs[strings.Fields(s.Name())[0]] = m
		}
		if got := attrs["invoke_agent"]["gen_ai.response.model"]; got != echoagent.Model {
			t.Errorf("capture=%v: turn's model %q, want %q", capture, got, echoagent.Model)
		}
		tool := attrs["execute_tool"]
		args, hasArgs := tool["gen_ai.tool.call.arguments"]
		result, hasResult := tool["gen_ai.tool.call.result"]
		if capture != hasArgs || capture != hasResult {
			t.Fatalf("capture=%v: tool span %v", capture, tool)
		}
		if capture && (!strings.Contains(args, "paris") || !strings.Contains(result, "PARIS")) {
			t.Errorf("tool span content: args %q result %q", args, result)
		}
	}
}
