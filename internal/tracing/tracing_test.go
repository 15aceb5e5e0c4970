package tracing_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/internal/otlptest"
	"github.com/agentengine/agentengine/internal/tracing"
)

// The exporter follows the standard variables: OTLP over gRPC or HTTP to the endpoint
// named, none without one, an error for what is not supported.
func TestExporterFromTheEnvironment(t *testing.T) {
	recv := &otlptest.Receiver{}
	grpcAddr, httpURL := recv.GRPC(t), recv.HTTP(t)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + grpcAddr, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "otlp (grpc)", ""},
		{"http", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": httpURL, "OTEL_SERVICE_NAME": "svc-http"}, "otlp (http/protobuf)", ""},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": httpURL + "/v1/traces",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "otlp (http/protobuf)", ""},
		{"no endpoint", map[string]string{}, "", ""},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": httpURL}, "", ""},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "", "OTEL_TRACES_EXPORTER"},
		{"unknown protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "", "protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME"} {
				t.Setenv(k, tc.env[k])
			}
			ctx := context.Background()
			tr, err := tracing.New(ctx, tracing.Config{Getenv: os.Getenv})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tr.Exporter() != tc.want {
				t.Fatalf("exporter %q, want %q", tr.Exporter(), tc.want)
			}
			name := "span-" + strings.ReplaceAll(tc.name, " ", "-")
			_, span := tr.Tracer().Start(ctx, name)
			span.End()
			if err := tr.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				return
			}
			got := recv.WaitFor(t, name, func(s []otlptest.Span) bool {
				for _, sp := range s {
					if sp.Name == name {
						return true
					}
				}
				return false
			})
			for _, sp := range got {
				if sp.Name == name && tc.env["OTEL_SERVICE_NAME"] != "" && sp.Service != tc.env["OTEL_SERVICE_NAME"] {
					t.Errorf("service %q, want %q", sp.Service, tc.env["OTEL_SERVICE_NAME"])
				}
			}
		})
	}
}

// Tracing off is a nil *Tracing: a no-op tracer whose spans record nothing.
func TestNilTracingRecordsNothing(t *testing.T) {
	var tr *tracing.Tracing
	_, span := tr.Tracer().Start(context.Background(), "x")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Fatal("a nil Tracing's span records")
	}
	if tr.Middleware() != nil || tr.Recent() != nil || tr.Shutdown(context.Background()) != nil {
		t.Fatal("a nil Tracing does something")
	}
	if tracing.Inject(context.Background()) != nil {
		t.Fatal("an untraced context injects a trace context")
	}
}

// Recent keeps the newest traces within its bounds in count and bytes, and finds a
// session's and a run's traces.
func TestRecentIsBounded(t *testing.T) {
	r := tracing.NewRecent(3, 0)
	for i := range 5 {
		var tid trace.TraceID
		tid[0] = byte(i + 1)
		r.Add(tracing.Span{TraceID: tid, SpanID: trace.SpanID{1}, Name: "invoke_agent", Start: time.Unix(int64(i), 0),
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.conversation.id", fmt.Sprint("s", i%2)), attribute.String(tracing.AttrRunID, fmt.Sprint("run_", i))}})
	}
	if n, _ := r.Stats(); n != 3 {
		t.Fatalf("%d traces kept, want 3", n)
	}
	if got := r.Run("run_0"); got != nil {
		t.Errorf("the oldest trace is still kept: %v", got)
	}
	if got := r.Run("run_4"); len(got) != 1 {
		t.Errorf("run_4: %v", got)
	}
	if got := r.Session("s0"); len(got) != 2 { // runs 2 and 4
		t.Errorf("session s0: %d spans, want 2", len(got))
	}

	small := tracing.NewRecent(100, 2000)
	for i := range 50 {
		var tid trace.TraceID
		tid[0], tid[1] = byte(i), 1
		small.Add(tracing.Span{TraceID: tid, Name: strings.Repeat("x", 100)})
	}
	if n, b := small.Stats(); b > 2000 || n == 0 || n >= 50 {
		t.Fatalf("byte bound: %d traces, %d bytes", n, b)
	}
}
