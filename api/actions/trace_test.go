package actions_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/internal/tracing"
)

type tracedSpan struct {
	TraceId, SpanId, ParentSpanId, Name, Kind, StartTime, Status, Error string
	OffsetMs, DurationMs                                                float64
	Attributes                                                          map[string]any
}

type runTrace struct {
	SessionId, InvocationId, StartTime string
	TraceIds                           []string
	DurationMs                         float64
	Spans                              []tracedSpan
}

// tracedEnv is the stack with tracing on: the HTTP middleware and the turns' spans,
// kept by a Recent that GetRunTrace reads.
func tracedEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Recent: tracing.NewRecent(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(ctx) })
	return newEnv(t, func(o *envOptions) {
		o.tracer = tr.Tracer()
		o.router.Trace = tr.Middleware()
		o.cfg.Traces = tr.Recent()
	})
}

func (r runTrace) named(prefix string) []tracedSpan {
	var out []tracedSpan
	for _, sp := range r.Spans {
		if len(sp.Name) >= len(prefix) && sp.Name[:len(prefix)] == prefix {
			out = append(out, sp)
		}
	}
	return out
}

// A tool turn's trace: the HTTP request, the turn, its store writes, the runner call and
// the tool call, one tree, each with its offset and duration; RunId names the run too.
func TestGetRunTrace(t *testing.T) {
	e := tracedEnv(t)
	var boot struct{ Capabilities struct{ Traces bool } }
	e.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if !boot.Capabilities.Traces {
		t.Error("bootstrap: Traces is false with tracing on")
	}
	run := struct{ SessionId, InvocationId string }{"s_traced", "inv_traced"}
	e.must("CreateSession", map[string]any{"SessionId": run.SessionId}, nil)
	e.must("RunAgent", map[string]any{"SessionId": run.SessionId, "InvocationId": "inv_traced", "Messages": userMessages("use the tool on paris")}, nil)
	if err := e.rt.Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var tr runTrace
	e.must("GetRunTrace", map[string]any{"SessionId": run.SessionId, "InvocationId": "inv_traced"}, &tr)
	if tr.SessionId != run.SessionId || tr.InvocationId != "inv_traced" || len(tr.TraceIds) != 1 || tr.StartTime == "" {
		t.Fatalf("trace %+v", tr)
	}
	ids := map[string]bool{}
	for _, sp := range tr.Spans {
		ids[sp.SpanId] = true
		if sp.TraceId != tr.TraceIds[0] || sp.DurationMs < 0 || sp.OffsetMs < 0 || sp.OffsetMs+sp.DurationMs > tr.DurationMs+0.001 || sp.Status != "ok" {
			t.Errorf("span %+v (trace lasts %vms)", sp, tr.DurationMs)
		}
	}
	roots := 0
	for _, sp := range tr.Spans {
		if sp.ParentSpanId == "" {
			roots++
		} else if !ids[sp.ParentSpanId] {
			t.Errorf("span %q: parent %s is not in the trace", sp.Name, sp.ParentSpanId)
		}
	}
	if roots != 1 || tr.Spans[0].Kind != "server" || tr.Spans[0].Attributes["http.route"] == nil {
		t.Errorf("want one root, the HTTP server span: %d roots, first %+v", roots, tr.Spans[0])
	}
	turn := tr.named("invoke_agent ")
	if len(turn) != 1 || turn[0].Attributes["gen_ai.agent.name"] != "echo" || turn[0].Attributes["gen_ai.conversation.id"] != run.SessionId ||
		turn[0].Attributes["agentengine.run.id"] != "inv_traced" || turn[0].Attributes["agentengine.run.status"] != "completed" ||
		turn[0].Attributes["gen_ai.usage.output_tokens"] == nil || turn[0].Attributes["gen_ai.response.model"] == nil {
		t.Fatalf("invoke_agent %+v", turn)
	}
	tool := tr.named("execute_tool ")
	if len(tool) != 1 || tool[0].Attributes["gen_ai.tool.name"] != "lookup" || tool[0].Attributes["gen_ai.tool.call.id"] == "" ||
		tool[0].ParentSpanId != turn[0].SpanId || tool[0].Attributes["gen_ai.tool.call.arguments"] != nil {
		t.Errorf("execute_tool %+v", tool)
	}
	if len(tr.named("runner.run ")) != 1 || len(tr.named("store ")) < 2 {
		t.Errorf("runner and store spans missing: %+v", tr.Spans)
	}

	var again runTrace
	e.must("GetRunTrace", map[string]any{"SessionId": run.SessionId, "RunId": "inv_traced"}, &again)
	if len(again.Spans) != len(tr.Spans) {
		t.Errorf("by RunId: %d spans, by InvocationId %d", len(again.Spans), len(tr.Spans))
	}
}

// Another user's run is not found, even when that user names the same session and run
// ids for runs of their own: each sees only their own trace.
func TestGetRunTraceIsTheCallersOwn(t *testing.T) {
	e := tracedEnv(t)
	e.must("CreateSession", map[string]any{"SessionId": "shared"}, nil)
	e.must("RunAgent", map[string]any{"SessionId": "shared", "InvocationId": "inv_same", "Messages": userMessages("use the tool on paris")}, nil)
	ref := map[string]any{"SessionId": "shared", "InvocationId": "inv_same"}
	wantError(t, e.post("GetRunTrace", ref, "X-AgentEngine-User", "mallory"), http.StatusNotFound, actions.CodeNotFound, "shared")

	e.must("CreateSession", map[string]any{"SessionId": "shared"}, nil, "X-AgentEngine-User", "mallory")
	e.must("RunAgent", map[string]any{"SessionId": "shared", "InvocationId": "inv_same", "Messages": userMessages("hello")}, nil, "X-AgentEngine-User", "mallory")
	if err := e.rt.Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mine, theirs runTrace
	e.must("GetRunTrace", ref, &mine)
	e.must("GetRunTrace", ref, &theirs, "X-AgentEngine-User", "mallory")
	if len(mine.TraceIds) != 1 || len(theirs.TraceIds) != 1 || mine.TraceIds[0] == theirs.TraceIds[0] {
		t.Fatalf("traces: mine %v, theirs %v", mine.TraceIds, theirs.TraceIds)
	}
	if len(mine.named("execute_tool ")) != 1 || len(theirs.named("execute_tool ")) != 0 {
		t.Errorf("mallory's trace shows the tool call of the other user's run")
	}
}

func TestGetRunTraceErrors(t *testing.T) {
	e := tracedEnv(t)
	run := struct{ SessionId, InvocationId string }{"s_hello", "inv_hello"}
	e.must("CreateSession", map[string]any{"SessionId": run.SessionId}, nil)
	e.must("RunAgent", map[string]any{"SessionId": run.SessionId, "InvocationId": run.InvocationId, "Messages": userMessages("hello")}, nil)
	for _, tc := range []struct {
		name     string
		body     any
		status   int
		code     string
		mentions string
	}{
		{"no session", map[string]any{"InvocationId": run.InvocationId}, 400, actions.CodeMissingParameter, "SessionId"},
		{"no run", map[string]any{"SessionId": run.SessionId}, 400, actions.CodeMissingParameter, "InvocationId"},
		{"bad run id", map[string]any{"SessionId": run.SessionId, "RunId": "a\x01b"}, 400, actions.CodeInvalidParameter, "RunId"},
		{"bad type", map[string]any{"SessionId": run.SessionId, "InvocationId": 7}, 400, actions.CodeInvalidParameter, "InvocationId"},
		{"two runs", map[string]any{"SessionId": run.SessionId, "InvocationId": run.InvocationId, "RunId": "other"}, 400, actions.CodeInvalidParameter, "RunId"},
		{"not json", "{", 400, actions.CodeInvalidParameter, ""},
		{"unknown session", map[string]any{"SessionId": "nope", "InvocationId": run.InvocationId}, 404, actions.CodeNotFound, "nope"},
		{"unknown run", map[string]any{"SessionId": run.SessionId, "InvocationId": "inv_unknown"}, 404, actions.CodeNotFound, "inv_unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post("GetRunTrace", tc.body), tc.status, tc.code, tc.mentions)
		})
	}
	r := e.do(http.MethodGet, actions.Prefix+"GetRunTrace", nil)
	wantError(t, r, http.StatusMethodNotAllowed, actions.CodeMethod, "POST")
}

// With tracing off no traces are kept: the bootstrap says so and GetRunTrace answers
// 503 in the envelope (after the session and run checks: a bad request is still a 400).
func TestGetRunTraceTracingOff(t *testing.T) {
	e := newEnv(t)
	var boot struct{ Capabilities struct{ Traces bool } }
	e.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if boot.Capabilities.Traces {
		t.Error("bootstrap: Traces is true with tracing off")
	}
	run := struct{ SessionId, InvocationId string }{"s_hello", "inv_hello"}
	e.must("CreateSession", map[string]any{"SessionId": run.SessionId}, nil)
	e.must("RunAgent", map[string]any{"SessionId": run.SessionId, "InvocationId": run.InvocationId, "Messages": userMessages("hello")}, nil)
	wantError(t, e.post("GetRunTrace", map[string]any{"SessionId": run.SessionId, "InvocationId": run.InvocationId}),
		http.StatusServiceUnavailable, actions.CodeUnavailable, "--no-trace")
	wantError(t, e.post("GetRunTrace", map[string]any{"SessionId": run.SessionId}), 400, actions.CodeMissingParameter, "InvocationId")
}
