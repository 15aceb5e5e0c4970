// Package otlptest is an OTLP trace receiver for tests: it accepts OTLP/HTTP protobuf
// exports on an httptest server and OTLP/gRPC exports on a loopback gRPC server, and
// keeps the spans it received.
package otlptest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a received span with what tests look at.
type Span struct {
	Service              string
	TraceID, SpanID      string
	ParentID             string // "" for a root
	Name                 string
	Kind                 tracepb.Span_SpanKind
	Attributes           map[string]string
	StatusCode           tracepb.Status_StatusCode
	StartNanos, EndNanos uint64
}

// Receiver collects exported spans.
type Receiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []Span
	metrics map[string]bool // names of the metrics received
}

// HTTP serves OTLP/HTTP (POST /v1/traces, protobuf) until the test ends and returns its
// base URL (for OTEL_EXPORTER_OTLP_ENDPOINT).
func (r *Receiver) HTTP(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || (req.URL.Path != "/v1/traces" && req.URL.Path != "/v1/metrics") {
			http.NotFound(w, req)
			return
		}
		b, err := io.ReadAll(req.Body)
		var out []byte
		if req.URL.Path == "/v1/metrics" {
			var in colmetricspb.ExportMetricsServiceRequest
			if err == nil {
				err = proto.Unmarshal(b, &in)
			}
			if err == nil {
				r.addMetrics(&in)
				out, _ = proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
			}
		} else if strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
			err = r.addJSON(b)
			out = []byte("{}")
		} else {
			var in coltracepb.ExportTraceServiceRequest
			if err == nil {
				err = proto.Unmarshal(b, &in)
			}
			if err == nil {
				r.add(&in)
				out, _ = proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// GRPC serves OTLP/gRPC on loopback until the test ends and returns its address.
func (r *Receiver) GRPC(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, r)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// Export implements the OTLP gRPC trace service.
func (r *Receiver) Export(_ context.Context, in *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.add(in)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) add(in *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range in.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Service: service, TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Name: s.GetName(), Kind: s.GetKind(), Attributes: attrs(s.GetAttributes()),
					StatusCode: s.GetStatus().GetCode(), StartNanos: s.GetStartTimeUnixNano(), EndNanos: s.GetEndTimeUnixNano(),
				}
				if len(s.GetParentSpanId()) > 0 {
					sp.ParentID = hex.EncodeToString(s.GetParentSpanId())
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
}

func (r *Receiver) addMetrics(in *colmetricspb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics == nil {
		r.metrics = map[string]bool{}
	}
	for _, rm := range in.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				r.metrics[m.GetName()] = true
			}
		}
	}
}

// Metric reports whether a metric of that name was received (over OTLP/HTTP).
func (r *Receiver) Metric(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics[name]
}

// addJSON takes an OTLP/JSON trace export (ids in hex, as the OTLP JSON encoding has
// them; only string, int and bool attribute values).
func (r *Receiver) addJSON(b []byte) error {
	type value struct {
		StringValue *string `json:"stringValue"`
		IntValue    *string `json:"intValue"`
		BoolValue   *bool   `json:"boolValue"`
	}
	type kv struct {
		Key   string `json:"key"`
		Value value  `json:"value"`
	}
	var in struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []kv `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Spans []struct {
					TraceID      string `json:"traceId"`
					SpanID       string `json:"spanId"`
					ParentSpanID string `json:"parentSpanId"`
					Name         string `json:"name"`
					Kind         int32  `json:"kind"`
					Attributes   []kv   `json:"attributes"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	str := func(kvs []kv) map[string]string {
		m := map[string]string{}
		for _, a := range kvs {
			switch {
			case a.Value.StringValue != nil:
				m[a.Key] = *a.Value.StringValue
			case a.Value.IntValue != nil:
				m[a.Key] = *a.Value.IntValue
			case a.Value.BoolValue != nil:
				m[a.Key] = strconv.FormatBool(*a.Value.BoolValue)
			}
		}
		return m
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range in.ResourceSpans {
		service := str(rs.Resource.Attributes)["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, Span{Service: service, TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentSpanID,
					Name: s.Name, Kind: tracepb.Span_SpanKind(s.Kind), Attributes: str(s.Attributes)})
			}
		}
	}
	return nil
}

// Spans returns what was received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor waits up to 20 s until ok holds for the received spans, and returns them.
func (r *Receiver) WaitFor(t testing.TB, what string, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		spans := r.Spans()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; received %d spans: %+v", what, len(spans), spans)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	b, _ := proto.Marshal(v)
	return string(b)
}
