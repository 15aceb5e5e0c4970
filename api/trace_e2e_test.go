package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/otlptest"
	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// tracedAgent is the echo agent with a model span of its own, made from the context the
// SDK hands to Run and exported by the runner's own tracer provider, as an agent's
// framework does in a runner process.
type tracedAgent struct {
	*echoagent.Agent
	tracer trace.Tracer
}

func (a tracedAgent) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	ctx, span := a.tracer.Start(ctx, "chat "+echoagent.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIRequestModel(echoagent.Model)))
	defer span.End()
	return a.Agent.Run(ctx, req, emit)
}

// One turn is one trace, exported over OTLP/HTTP to a receiver: the client's traceparent
// is kept, and the HTTP server span, the turn (invoke_agent, GenAI attributes, token
// counts), its store writes and tool call, the runner call and the runner's own model
// span are one tree. No message content is recorded. The recent traces answer ADK's
// debug trace routes.
func TestOneTraceFromTheRequestToTheRunner(t *testing.T) {
	recv := &otlptest.Receiver{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.HTTP(t))
	t.Setenv("OTEL_SERVICE_NAME", "agentengine-test")
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Getenv: os.Getenv, Recent: tracing.NewRecent(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Exporter() != "otlp (http/protobuf)" {
		t.Fatalf("exporter %q", tr.Exporter())
	}
	runnerExp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runnerTP := sdktrace.NewTracerProvider(sdktrace.WithBatcher(runnerExp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("runner"))))

	client, stop := inprocess.Serve(tracedAgent{echoagent.New(), runnerTP.Tracer("runner")})
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}},
		Tracer: tr.Tracer(), StoreBackend: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = rt.Close(cctx)
		stop()
	}()
	srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Trace: tr.Middleware(), Surfaces: []api.Surface{
		openai.New(openai.Config{Runtime: rt}), adkweb.New(adkweb.Config{Runtime: rt, Traces: tr.Recent()})}}))
	defer srv.Close()

	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	secret := "use the tool on secret paris"
	req, _ := http.NewRequest("POST", srv.URL+"/v1/responses", strings.NewReader(`{"model":"echo","input":"`+secret+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("responses: %d %s", resp.StatusCode, body)
	}
	if err := rt.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := runnerTP.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	if err := tr.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}
	spans := recv.WaitFor(t, "the runner's model span", func(s []otlptest.Span) bool {
		for _, sp := range s {
			if sp.Service == "runner" {
				return true
			}
		}
		return false
	})
	byName := map[string]otlptest.Span{}
	for _, sp := range spans {
		t.Logf("%s %s parent=%s kind=%v %v", sp.Service, sp.Name, sp.ParentID, sp.Kind, sp.Attributes)
		if sp.TraceID != clientTrace {
			t.Errorf("span %s is in trace %s, not the client's %s", sp.Name, sp.TraceID, clientTrace)
		}
		byName[strings.Fields(sp.Name)[0]] = sp
		for k, v := range sp.Attributes {
			if strings.Contains(v, "secret") {
				t.Errorf("span %s attribute %s carries the message: %q", sp.Name, k, v)
			}
		}
	}
	httpSpan, ok := byName["POST"]
	if !ok || httpSpan.Kind != tracepb.Span_SPAN_KIND_SERVER || httpSpan.ParentID != clientSpan || httpSpan.Service != "agentengine-test" {
		t.Fatalf("HTTP server span %+v (all: %+v)", httpSpan, spans)
	}
	turn := byName["invoke_agent"]
	if turn.ParentID != httpSpan.SpanID || turn.Attributes["gen_ai.operation.name"] != "invoke_agent" ||
		turn.Attributes["gen_ai.agent.name"] != "echo" || turn.Attributes["gen_ai.conversation.id"] == "" ||
		turn.Attributes["agentengine.run.id"] == "" || turn.Attributes["gen_ai.usage.input_tokens"] == "" ||
		turn.Attributes["gen_ai.usage.output_tokens"] == "" {
		t.Errorf("invoke_agent span %+v", turn)
	}
	if _, ok := turn.Attributes["enduser.id"]; ok {
		t.Errorf("the user is recorded without being asked: %v", turn.Attributes)
	}
	runner := byName["runner.run"]
	if runner.ParentID != turn.SpanID || runner.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("runner span %+v", runner)
	}
	chat := byName["chat"]
	if chat.Service != "runner" || chat.ParentID != runner.SpanID || chat.Attributes["gen_ai.request.model"] != echoagent.Model {
		t.Errorf("the runner's chat span %+v", chat)
	}
	tool := byName["execute_tool"]
	if tool.ParentID != turn.SpanID || tool.Attributes["gen_ai.tool.name"] != "lookup" || tool.Attributes["gen_ai.tool.call.id"] == "" {
		t.Errorf("tool span %+v", tool)
	}
	if st := byName["store"]; st.ParentID != turn.SpanID {
		t.Errorf("store span %+v", st)
	}

	// ADK's dev UI reads the same turn from the recent traces.
	sid := turn.Attributes["gen_ai.conversation.id"]
	var list []map[string]any
	getJSON(t, srv.URL+"/dev/apps/echo/debug/trace/session/"+sid, &list)
	names := map[string]bool{}
	for _, s := range list {
		names[strings.Fields(s["name"].(string))[0]] = true
		if s["trace_id"] == nil || s["start_time"] == nil {
			t.Errorf("web UI span %v", s)
		}
		// The dev UI files a trace under the invocation its spans name with ADK's attribute.
		if attrs := s["attributes"].(map[string]any); strings.HasPrefix(s["name"].(string), "invoke_agent ") &&
			attrs["gcp.vertex.agent.invocation_id"] != turn.Attributes["agentengine.run.id"] {
			t.Errorf("turn span without ADK's invocation id: %v", attrs)
		}
	}
	if !names["invoke_agent"] || !names["runner.run"] || !names["execute_tool"] || !names["POST"] {
		t.Errorf("session trace names %v", names)
	}
	var ev map[string]any
	getJSON(t, srv.URL+"/debug/trace/"+turn.Attributes["agentengine.run.id"]+"-4", &ev)
	if ev["gen_ai.agent.name"] != "echo" || ev["gcp.vertex.agent.event_id"] == nil || ev["trace_id"] == nil {
		t.Errorf("event trace %v", ev)
	}
	if resp, _ := http.Get(srv.URL + "/debug/trace/run_unknown-1"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown event trace = %d, want 404", resp.StatusCode)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b)
	}
}

// seesTrace records whether the runner got a trace context.
type seesTrace struct {
	*echoagent.Agent
	saw chan bool
}

func (a seesTrace) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	a.saw <- trace.SpanContextFromContext(ctx).IsValid()
	return a.Agent.Run(ctx, req, emit)
}

// With tracing off (no tracer, no middleware) a client's traceparent goes nowhere: the
// runner gets no trace context.
func TestUntracedTurnSendsNoTraceContext(t *testing.T) {
	a := seesTrace{echoagent.New(), make(chan bool, 1)}
	client, stop := inprocess.Serve(a)
	defer stop()
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt})}}))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/responses", strings.NewReader(`{"model":"echo","input":"hi"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if <-a.saw {
		t.Fatal("an untraced turn handed the runner a trace context")
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = rt.Close(cctx)
}

// toolTracer is an agent whose framework traces its own tool calls, as the Python
// bridges and ADK do: it makes the execute_tool span of call_traced itself and says so
// in the call's result; call_plain it does not trace.
type toolTracer struct {
	*echoagent.Agent
	tracer trace.Tracer
}

func (a toolTracer) Run(ctx context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.ToolCall("call_traced", "lookup", `{"q":"a"}`); err != nil {
		return err
	}
	_, span := a.tracer.Start(ctx, "execute_tool lookup", trace.WithAttributes(semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName("lookup"), semconv.GenAIToolCallID("call_traced")))
	span.End()
	if err := emit.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolResult{ToolResult: &runnerv1.ToolResult{
		CallId: "call_traced", Name: "lookup", Output: "A", Traced: true}}}); err != nil {
		return err
	}
	if err := emit.ToolCall("call_plain", "lookup", `{"q":"b"}`); err != nil {
		return err
	}
	if err := emit.ToolResult("call_plain", "lookup", "B", false); err != nil {
		return err
	}
	return emit.Text("done")
}

// A tool call the runner traced itself is one execute_tool span in the exported trace
// (the runner's), not two: the host exports its own only for the calls the runner did
// not trace. The kept traces, which the runner's spans do not reach, have the host's
// span of every call.
func TestOneToolSpanPerCall(t *testing.T) {
	recv := &otlptest.Receiver{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.HTTP(t))
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Config{Getenv: os.Getenv, Recent: tracing.NewRecent(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	runnerExp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runnerTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(runnerExp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("runner"))))
	client, stop := inprocess.Serve(toolTracer{echoagent.New(), runnerTP.Tracer("runner")})
	defer stop()
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}},
		Tracer: tr.Tracer(), KeptTracer: tr.KeptTracer()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	srv := httptest.NewServer(api.NewRouter(api.Config{Runtime: rt, Trace: tr.Middleware(),
		Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt})}}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"echo","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("responses: %d", resp.StatusCode)
	}
	if err := rt.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	spans := recv.WaitFor(t, "the turn", func(s []otlptest.Span) bool {
		for _, sp := range s {
			if strings.HasPrefix(sp.Name, "invoke_agent") {
				return true
			}
		}
		return false
	})
	tools := map[string][]string{} // call id -> services of its execute_tool spans
	var trace string
	for _, sp := range spans {
		if trace == "" {
			trace = sp.TraceID
		}
		if sp.TraceID != trace {
			t.Errorf("span %s is in trace %s, not %s", sp.Name, sp.TraceID, trace)
		}
		if strings.HasPrefix(sp.Name, "execute_tool") {
			id := sp.Attributes["gen_ai.tool.call.id"]
			tools[id] = append(tools[id], sp.Service)
		}
	}
	if len(tools) != 2 || len(tools["call_traced"]) != 1 || tools["call_traced"][0] != "runner" ||
		len(tools["call_plain"]) != 1 || tools["call_plain"][0] != "agentengine" {
		t.Errorf("execute_tool spans by call id and service: %v, want call_traced: [runner], call_plain: [agentengine]", tools)
	}
	kept := map[string]int{}
	for _, sp := range tr.Recent().Where("gen_ai.agent.name", "echo") {
		if v, ok := sp.Attr("gen_ai.tool.call.id"); ok && strings.HasPrefix(sp.Name, "execute_tool") {
			kept[v.AsString()]++
		}
	}
	if len(kept) != 2 || kept["call_traced"] != 1 || kept["call_plain"] != 1 {
		t.Errorf("kept execute_tool spans by call id: %v, want one of each call", kept)
	}
}
