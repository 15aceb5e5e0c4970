package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/otlptest"
)

// tracedEntry wraps a project's agent module: it gives the runner process a tracer
// provider exporting its spans as OTLP/JSON (the test environment has the OpenTelemetry
// SDK but no OTLP exporter package), as a project that exports its own spans does.
const tracedEntry = `
import json, os, urllib.request
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class OTLPJSON(SpanExporter):
    def export(self, spans):
        def attrs(d):
            return [{"key": k, "value": {"stringValue": str(v)}} for k, v in (d or {}).items()]
        out = [{"traceId": format(s.context.trace_id, "032x"), "spanId": format(s.context.span_id, "016x"),
                "parentSpanId": format(s.parent.span_id, "016x") if s.parent else "",
                "name": s.name, "kind": s.kind.value + 1, "attributes": attrs(s.attributes)} for s in spans]
        body = {"resourceSpans": [{"resource": {"attributes": attrs({"service.name": "python-runner"})},
                                   "scopeSpans": [{"spans": out}]}]}
        req = urllib.request.Request(os.environ["TEST_OTLP_URL"] + "/v1/traces", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPJSON()))
trace.set_tracer_provider(provider)

from agent import VARIABLE  # noqa: E402
`

// One trace from the client's traceparent to the Python runner's own spans, for a
// LangGraph tool turn (the bridge's chat and execute_tool spans) and an ADK tool turn
// (the spans ADK makes itself): the host's HTTP, turn and runner spans and the runner's
// spans, exported by the runner process, are all in the client's trace, the runner's
// children of the host's runner call; each tool call is one execute_tool span, the
// runner's. No message content is recorded.
func TestPythonTurnIsOneTraceToTheFrameworksSpans(t *testing.T) {
	for _, tc := range []struct {
		example, variable, input string
		want                     []string // service and first word of span names
	}{
		{"langgraph-chat", "graph", "what is the weather in Paris?", []string{"python-runner chat", "python-runner execute_tool"}},
		{"adk-assistant", "root_agent", "what is the weather in Paris?", []string{"python-runner invoke_agent", "python-runner execute_tool"}},
	} {
		t.Run(tc.example, func(t *testing.T) {
			pythonTrace(t, tc.example, tc.variable, tc.input, tc.want)
		})
	}
}

func pythonTrace(t *testing.T, example, variable, input string, want []string) {
	dir := copyPyProject(t, "../../examples/"+example, "")
	recv := &otlptest.Receiver{}
	url := recv.HTTP(t)
	if err := os.WriteFile(filepath.Join(dir, "traced_agent.py"), []byte(strings.Replace(tracedEntry, "VARIABLE", variable, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "agentengine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(cfg), "entry_point: agent.py", "entry_point: traced_agent.py", 1) +
		"\nenv:\n  TEST_OTLP_URL: " + url + "\n"
	if err := os.WriteFile(filepath.Join(dir, "agentengine.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	s := startPython(t, dir)
	model := modelOf(t, dir)

	const traceID = "5b8efff798038103d269b633813fc60c"
	req, _ := http.NewRequest("POST", s.url+"/v1/responses",
		strings.NewReader(`{"model":"`+model+`","input":"`+input+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-eee19b7ec3c1b174-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("turn: %d", resp.StatusCode)
	}
	spans := recv.WaitFor(t, "the host's and the runner's spans", func(sp []otlptest.Span) bool {
		seen := map[string]bool{}
		for _, s := range sp {
			seen[s.Service+" "+strings.Fields(s.Name)[0]] = true
		}
		for _, w := range want {
			if !seen[w] {
				return false
			}
		}
		return seen["agentengine invoke_agent"] && seen["agentengine runner.run"]
	})
	for _, s := range spans {
		t.Logf("%s %s parent=%s", s.Service, s.Name, s.ParentID)
	}
	var runnerSpan string
	pySpans := map[string]bool{}
	for _, s := range spans {
		if s.Name == "runner.run "+model {
			runnerSpan = s.SpanID
		}
		if s.Service == "python-runner" {
			pySpans[s.SpanID] = true
		}
	}
	joined := false
	for _, s := range spans {
		if s.TraceID != traceID {
			t.Errorf("%s %s is in trace %s, not the client's", s.Service, s.Name, s.TraceID)
		}
		for k, v := range s.Attributes {
			if strings.Contains(v, "Paris") {
				t.Errorf("%s %s: %s carries the message: %q", s.Service, s.Name, k, v)
			}
		}
		// The runner's spans hang under the host's runner call, directly or through
		// each other (ADK nests its own).
		if s.Service == "python-runner" {
			joined = joined || s.ParentID == runnerSpan
			if s.ParentID != runnerSpan && !pySpans[s.ParentID] {
				t.Errorf("runner span %s has parent %s, outside the host's runner call %s", s.Name, s.ParentID, runnerSpan)
			}
		}
		if s.Service == "python-runner" && strings.HasPrefix(s.Name, "execute_tool") && s.Attributes["gen_ai.tool.name"] != "get_weather" {
			t.Errorf("tool span %+v", s)
		}
		// The runner traced its tool call: the host adds no second span for it.
		if s.Service != "python-runner" && strings.HasPrefix(s.Name, "execute_tool") {
			t.Errorf("the host made a tool span the runner made already: %+v", s)
		}
	}
	if !joined {
		t.Error("no runner span is a child of the host's runner call")
	}
}
