package tracing

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// capture is an OTLP/HTTP receiver keeping each request's decoded body and headers.
type capture struct {
	mu       sync.Mutex
	reqs     []*coltracepb.ExportTraceServiceRequest
	headers  []http.Header
	paths    []string
	status   []int // answered in turn; 200 once they run out
	respBody []byte
}

func (c *capture) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Errorf("read: %v", err)
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("the request does not decode as an ExportTraceServiceRequest: %v", err)
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, &req)
		c.headers = append(c.headers, r.Header.Clone())
		c.paths = append(c.paths, r.URL.Path)
		code := http.StatusOK
		if len(c.status) > 0 {
			code, c.status = c.status[0], c.status[1:]
		}
		resp := c.respBody
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(code)
		_, _ = w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (c *capture) last(t *testing.T) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		t.Fatal("nothing received")
	}
	return c.reqs[len(c.reqs)-1]
}

// testSpans makes spanScenario's spans with the SDK's provider.
func testSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := &tracetest.SpanRecorder{}
	spanScenario(t, func(res *resource.Resource) trace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec),
			sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{AttributeCountLimit: 16, EventCountLimit: 2, LinkCountLimit: 1,
				AttributeValueLengthLimit: -1, AttributeValueDepthLimit: -1, AttributePerEventCountLimit: 4, AttributePerLinkCountLimit: 4}))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return tp
	})
	return rec.Ended()
}

// scenarioLimits are the span limits spanScenario's providers are made with.
var scenarioLimits = spanLimits{attrs: 16, events: 2, links: 1, eventAttrs: 4, linkAttrs: 4, valueLen: -1}

// spanScenario makes spans covering what a span can carry, on the providers newTP
// makes (one a resource; limits as scenarioLimits): every attribute type, events,
// links, each status, each kind, a remote parent with a trace state, dropped
// attributes, attributes given as sources, leaves, two resources and three
// instrumentation scopes (one with attributes and a schema URL, one empty).
func spanScenario(t *testing.T, newTP func(res *resource.Resource) trace.TracerProvider) {
	t.Helper()
	res1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.40.0", semconv.ServiceName("one"), semconv.ServiceVersion("1.2.3"),
		attribute.Int("n", 7))
	res2 := resource.NewSchemaless(semconv.ServiceName("two"))
	tp1, tp2 := newTP(res1), newTP(res2)
	main := tp1.Tracer(ScopeName, trace.WithInstrumentationVersion("v9"))
	other := tp1.Tracer("other", trace.WithSchemaURL("https://opentelemetry.io/schemas/1.40.0"),
		trace.WithInstrumentationAttributes(attribute.String("scope.attr", "x"), attribute.Bool("b", true)))
	bare := tp2.Tracer("")

	every := []attribute.KeyValue{
		attribute.String("s", "text ü"), attribute.String("empty", ""), attribute.Int("i", -42), attribute.Int64("big", 1<<62),
		attribute.Int("zero", 0), attribute.Bool("t", true), attribute.Bool("f", false), attribute.Float64("pi", 3.14159),
		attribute.Float64("fzero", 0), attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.IntSlice("is", []int{1, -2, 0}),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("fs", []float64{0.5, -1}),
		attribute.ByteSlice("bytes", []byte{0, 1, 2, 255}), attribute.ByteSlice("nobytes", nil),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(3), attribute.SliceValue(attribute.BoolValue(true))),
		attribute.Map("map", attribute.String("k", "v"), attribute.Int("n", 1), attribute.Map("inner", attribute.Float64("f", 2))),
	}
	long := strings.Repeat("long value ", 40) // > 127 bytes: lengths of two bytes and more

	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6},
		TraceFlags: trace.FlagsSampled, Remote: true})
	ts, err := trace.ParseTraceState("vendor=value,other=x")
	if err != nil {
		t.Fatal(err)
	}
	remote = remote.WithTraceState(ts)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)

	ctx, root := main.Start(ctx, "GET /v1/things", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(every[:8]...))
	root.SetAttributes(every[8:]...) // beyond the limit of 16: one dropped
	root.SetAttributes(attribute.String("long", long))
	_, child := main.Start(ctx, "invoke_agent echo", trace.WithLinks(
		trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "follows")}},
		trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}})}, // dropped
	))
	child.AddEvent("approval_request", trace.WithAttributes(attribute.String("id", "a1"), attribute.Int("n", 1),
		attribute.Int("m", 2), attribute.Int("o", 3), attribute.Int("p", 4), attribute.Int("q", 5)), trace.WithTimestamp(time.Unix(100, 5)))
	child.AddEvent("bare")
	child.AddEvent("dropped")
	child.RecordError(errors.New("boom"))
	child.SetStatus(codes.Error, "it failed")
	// Finished children recorded on their parent (leaves); the SDK's provider gets spans.
	spanrec.RecordLeaf(main, child, spanrec.Leaf{Name: "store append", Kind: trace.SpanKindClient,
		Attributes: spanrec.Fixed(every[:3]), Start: time.Unix(2, 0), End: time.Unix(3, 0)})
	spanrec.RecordLeaf(main, child, spanrec.Leaf{Name: "store finish_run", Start: time.Unix(3, 0), End: time.Unix(4, 5), Error: "disk full"})
	child.End()
	_, ok := other.Start(ctx, "store write", trace.WithSpanKind(trace.SpanKindClient))
	ok.SetStatus(codes.Ok, "")
	ok.End()
	for _, k := range []trace.SpanKind{trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKindUnspecified} {
		_, s := bare.Start(context.Background(), "", trace.WithSpanKind(k), trace.WithTimestamp(time.Unix(0, 0)))
		s.End(trace.WithTimestamp(time.Unix(1, 0)))
	}
	// Attributes given as sources: the recorder keeps the source and reads it when the
	// span is read; the SDK's spans get them set.
	_, src := main.Start(ctx, "store start_run", trace.WithSpanKind(trace.SpanKindClient))
	spanrec.SetAttributes(src, spanrec.Fixed(every[:5]))
	src.End()
	_, mixed := main.Start(ctx, "source and more")
	spanrec.SetAttributes(mixed, spanrec.Fixed{attribute.String("a", "1"), attribute.String("b", "2")})
	mixed.SetAttributes(attribute.String("a", "3"), attribute.String("c", "4")) // a takes the new value in its place
	mixed.End()
	root.End()
}

// export sends spans through exp and returns what the receiver decoded, its resource
// spans in a fixed order (the SDK's transform groups them through a map).
func export(t *testing.T, c *capture, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	req := c.last(t)
	service := func(rs *tracepb.ResourceSpans) string {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == string(semconv.ServiceNameKey) {
				return kv.GetValue().GetStringValue()
			}
		}
		return ""
	}
	slices.SortFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int { return strings.Compare(service(a), service(b)) })
	return req
}

// exporterPair starts two receivers and returns them with an otlptracehttp exporter
// sending to the first and ours to the second.
func exporterPair(t *testing.T) (theirs, ours *capture, official sdktrace.SpanExporter, exp *httpExporter) {
	t.Helper()
	theirs, ours = &capture{}, &capture{}
	theirSrv, ourSrv := theirs.serve(t), ours.serve(t)
	ctx := context.Background()
	official, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(theirSrv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = official.Shutdown(ctx) })
	exp, ok := httpExporterConfig(mapEnv(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ourSrv.URL}))
	if !ok {
		t.Fatal("an http endpoint is not ours")
	}
	return theirs, ours, official, exp
}

// The encoder writes the same request the OTLP exporter's own transform and protobuf
// marshalling do, for every kind of content a span can carry.
func TestHTTPExporterMatchesOTLPTransform(t *testing.T) {
	spans := testSpans(t)
	if len(spans) != 10 {
		t.Fatalf("%d spans", len(spans))
	}
	theirs, ours, official, exp := exporterPair(t)
	ctx := context.Background()
	// Twice: the second request reuses the buffers of the first.
	for range 2 {
		want := export(t, theirs, official, spans)
		got := export(t, ours, exp, spans)
		if !proto.Equal(want, got) {
			t.Fatalf("the request differs from otlptracehttp's:\ntheirs: %s\nours: %s", prototext.Format(want), prototext.Format(got))
		}
	}
	// One span at a time (a smaller buffer than the last), and an empty batch (nothing
	// sent).
	for _, s := range spans {
		want, got := export(t, theirs, official, []sdktrace.ReadOnlySpan{s}), export(t, ours, exp, []sdktrace.ReadOnlySpan{s})
		if !proto.Equal(want, got) {
			t.Fatalf("span %q differs from otlptracehttp's:\ntheirs: %s\nours: %s", s.Name(), prototext.Format(want), prototext.Format(got))
		}
	}
	n := len(ours.reqs)
	if err := exp.ExportSpans(ctx, nil); err != nil || len(ours.reqs) != n {
		t.Fatalf("an empty batch: %v, %d requests", err, len(ours.reqs)-n)
	}
	if got := ours.headers[0].Get("Content-Type"); got != "application/x-protobuf" {
		t.Errorf("Content-Type %q", got)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, spans); err == nil {
		t.Error("an export after Shutdown succeeded")
	}
}

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The endpoint, headers, timeout and compression come from the OTEL_EXPORTER_OTLP_*
// variables (the _TRACES_ ones win); what the exporter does not do falls back to
// otlptracehttp.
func TestHTTPExporterConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		url     string // "" when otlptracehttp is used instead
		headers map[string]string
		gzip    bool
		timeout time.Duration
	}{
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			url: "http://collector:4318/v1/traces", timeout: 10 * time.Second},
		{name: "base endpoint with a path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example/otlp/"},
			url: "https://c.example/otlp/v1/traces", timeout: 10 * time.Second},
		{name: "traces endpoint as is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2/custom"},
			url: "http://b:2/custom", timeout: 10 * time.Second},
		{name: "traces endpoint without a path", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2"},
			url: "http://b:2/", timeout: 10 * time.Second},
		{name: "headers, compression, timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20abc, x-team = a%2Cb ,bad,=x", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			"OTEL_EXPORTER_OTLP_TIMEOUT": "2500"},
			url: "http://c:4318/v1/traces", headers: map[string]string{"Authorization": "Basic abc", "x-team": "a,b"}, gzip: true, timeout: 2500 * time.Millisecond},
		{name: "the traces variables win", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
			"OTEL_EXPORTER_OTLP_TIMEOUT": "1000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "3000"},
			url: "http://c:4318/v1/traces", headers: map[string]string{"b": "2"}, timeout: 3 * time.Second},
		{name: "no endpoint (otlptracehttp's default)", env: map[string]string{}},
		{name: "a certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"}},
		{name: "a client key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": "/k.pem"}},
		{name: "the insecure switch", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_INSECURE": "true"}},
		{name: "a unix socket", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "unix:///run/otlp.sock"}},
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := httpExporterConfig(mapEnv(tc.env))
			if tc.url == "" {
				if ok {
					t.Fatalf("ours (%s), want otlptracehttp", e.url)
				}
				return
			}
			if !ok {
				t.Fatal("otlptracehttp, want ours")
			}
			if e.url != tc.url || e.gzip != tc.gzip || e.client.Timeout != tc.timeout {
				t.Errorf("url %q gzip %v timeout %v, want %q %v %v", e.url, e.gzip, e.client.Timeout, tc.url, tc.gzip, tc.timeout)
			}
			if !maps.Equal(tc.headers, e.headers) {
				t.Errorf("headers %v, want %v", e.headers, tc.headers)
			}
		})
	}
}

// Headers and gzip reach the receiver; a 503 is retried; a 400 is an error; a partial
// success is reported.
func TestHTTPExporterSends(t *testing.T) {
	spans := testSpans(t)
	var c capture
	srv := c.serve(t)
	exp, ok := httpExporterConfig(mapEnv(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/in",
		"OTEL_EXPORTER_OTLP_HEADERS": "x-key=s3cret", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}))
	if !ok {
		t.Fatal("not ours")
	}
	exp.retryInitial = time.Millisecond
	ctx := context.Background()

	c.status = []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}
	if err := exp.ExportSpans(ctx, spans); err != nil {
		t.Fatalf("retried 503s: %v", err)
	}
	if len(c.reqs) != 3 {
		t.Fatalf("%d requests, want 3 (two 503s, then 200)", len(c.reqs))
	}
	for i, h := range c.headers {
		if h.Get("x-key") != "s3cret" || h.Get("Content-Encoding") != "gzip" || c.paths[i] != "/in" {
			t.Errorf("request %d: path %s, headers %v", i, c.paths[i], h)
		}
	}
	if n := len(c.last(t).ResourceSpans); n != 2 {
		t.Errorf("%d resource spans, want 2", n)
	}

	c.status = []int{http.StatusBadRequest}
	if err := exp.ExportSpans(ctx, spans); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a 400: %v", err)
	}

	resp, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		RejectedSpans: 2, ErrorMessage: "too old"}})
	if err != nil {
		t.Fatal(err)
	}
	c.respBody = resp
	if err := exp.ExportSpans(ctx, spans); err == nil || !strings.Contains(err.Error(), "too old (2 spans rejected)") {
		t.Errorf("a partial success: %v", err)
	}

	// Retries stop when the context does.
	c.respBody = nil
	c.status = slices.Repeat([]int{http.StatusServiceUnavailable}, 1000)
	exp.retryInitial = 50 * time.Millisecond
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := exp.ExportSpans(cctx, spans); err == nil {
		t.Error("retrying 503s past the deadline succeeded")
	}
}

// partialSuccess reads what proto.Unmarshal reads, and fails where it fails.
func FuzzPartialSuccess(f *testing.F) {
	for _, m := range []*coltracepb.ExportTraceServiceResponse{
		{}, {PartialSuccess: &coltracepb.ExportTracePartialSuccess{}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "no"}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: -1}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x05, 0x08, 0x01, 0x7a, 0x01, 0x00}) // an unknown field inside
	f.Add([]byte{0x0a})
	f.Fuzz(func(t *testing.T, b []byte) {
		rejected, msg, err := partialSuccess(b)
		var want coltracepb.ExportTraceServiceResponse
		if proto.Unmarshal(b, &want) != nil {
			// proto.Unmarshal also rejects strings that are not UTF-8: only where it
			// reads the response must the two agree (and partialSuccess not panic).
			return
		}
		if err != nil {
			t.Fatalf("proto.Unmarshal reads %x, partialSuccess: %v", b, err)
		}
		if rejected != want.GetPartialSuccess().GetRejectedSpans() || msg != want.GetPartialSuccess().GetErrorMessage() {
			t.Fatalf("%x: %d %q, proto.Unmarshal %d %q", b, rejected, msg,
				want.GetPartialSuccess().GetRejectedSpans(), want.GetPartialSuccess().GetErrorMessage())
		}
	})
}

// BenchmarkEncode encodes and exports a batch of 512 spans like a turn's (five spans,
// the server span's and the turn's attributes).
func BenchmarkEncode(b *testing.B) {
	rec := &tracetest.SpanRecorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer(ScopeName)
	for len(rec.Ended()) < 512 {
		ctx, srv := tr.Start(context.Background(), "POST /v1/responses", trace.WithSpanKind(trace.SpanKindServer))
		ctx, turn := tr.Start(ctx, "invoke_agent echo")
		for _, n := range []string{"store start_run", "runner.run echo", "store finish_run"} {
			_, s := tr.Start(ctx, n, trace.WithSpanKind(trace.SpanKindClient))
			s.SetAttributes(semconv.DBSystemNameKey.String("memory"), semconv.DBOperationName("start_run"))
			s.End()
		}
		turn.SetAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName("echo"), attribute.String("agentengine.surface", "responses"),
			semconv.GenAIConversationID("0123456789abcdef"), attribute.String("agentengine.run.id", "run-0123456789"),
			attribute.String("agentengine.run.status", "completed"), semconv.GenAIUsageInputTokens(12), semconv.GenAIUsageOutputTokens(34))
		turn.End()
		srv.SetAttributes(semconv.HTTPRequestMethodKey.String("POST"), semconv.URLScheme("http"), semconv.URLPath("/v1/responses"),
			semconv.HTTPResponseStatusCode(200), semconv.NetworkProtocolVersion("1.1"), semconv.HTTPRoute("/v1/responses"),
			semconv.ClientAddress("127.0.0.1"), semconv.UserAgentOriginal("Go-http-client/1.1"))
		srv.End()
	}
	spans := rec.Ended()[:512]
	ended := make([]endedSpan, len(spans))
	for i, s := range spans {
		ended[i] = s
	}
	b.Run("encode", func(b *testing.B) {
		var e encoder
		b.ReportAllocs()
		for b.Loop() {
			body, _ := e.encode(ended)
			b.SetBytes(int64(len(body)))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/span")
	})
	// The whole export to a local receiver (its CPU counted too), ours against
	// otlptracehttp's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(srv.Close)
	official, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	ours, _ := httpExporterConfig(mapEnv(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}))
	for _, exp := range []struct {
		name string
		e    sdktrace.SpanExporter
	}{{"export/ours", ours}, {"export/otlptracehttp", official}} {
		b.Run(exp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.e.ExportSpans(context.Background(), spans); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/span")
		})
	}
}
