package tracing

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The server span: named by method and route, HTTP semantic conventions' attributes,
// a child of the client's traceparent when there is one, failed on a 5xx only, and the
// handlers see it in the request's context.
func TestServerSpan(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tc := range []struct {
		name, method, path, traceparent string
		status                          int
		wantName                        string
		want                            map[string]string
		failed                          bool
	}{
		{"ok", "POST", "/v1/things/7", "", 200, "POST /v1/things/:id",
			map[string]string{"http.request.method": "POST", "url.scheme": "http", "url.path": "/v1/things/7",
				"http.route": "/v1/things/:id", "http.response.status_code": "200", "network.protocol.version": "1.1",
				"client.address": "192.0.2.1", "user_agent.original": "test-agent"}, false},
		{"joins the caller", "POST", "/v1/things/7", "00-" + parentTrace + "-" + parentSpan + "-01", 200, "POST /v1/things/:id",
			map[string]string{"http.response.status_code": "200"}, false},
		{"client error", "POST", "/v1/things/7", "", 404, "POST /v1/things/:id",
			map[string]string{"http.response.status_code": "404"}, false},
		{"server error", "POST", "/v1/things/7", "", 503, "POST /v1/things/:id",
			map[string]string{"http.response.status_code": "503", "error.type": "503"}, true},
		{"no route", "GET", "/nowhere", "", 404, "GET", map[string]string{"url.path": "/nowhere"}, false},
		{"unknown method", "BREW", "/nowhere", "", 404, "_OTHER",
			map[string]string{"http.request.method": "_OTHER", "http.request.method_original": "BREW"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			r := gin.New()
			r.Use(serverMiddleware(tp.Tracer("test"), Propagator()))
			var inHandler trace.SpanContext
			r.POST("/v1/things/:id", func(c *gin.Context) {
				inHandler = trace.SpanContextFromContext(c.Request.Context())
				c.Status(tc.status)
			})
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.RemoteAddr = "192.0.2.1:5000"
			req.Header.Set("User-Agent", "test-agent")
			if tc.traceparent != "" {
				req.Header.Set("traceparent", tc.traceparent)
			}
			r.ServeHTTP(httptest.NewRecorder(), req)
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			s := spans[0]
			if s.Name() != tc.wantName || s.SpanKind() != trace.SpanKindServer {
				t.Errorf("span %q kind %v, want %q server", s.Name(), s.SpanKind(), tc.wantName)
			}
			got := map[string]string{}
			for _, kv := range s.Attributes() {
				got[string(kv.Key)] = kv.Value.String()
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if _, ok := got["error.type"]; ok != tc.failed || (s.Status().Code == codes.Error) != tc.failed {
				t.Errorf("status %v, attributes %v; failed want %v", s.Status(), got, tc.failed)
			}
			if tc.traceparent != "" && (s.Parent().TraceID().String() != parentTrace || s.Parent().SpanID().String() != parentSpan) {
				t.Errorf("parent %v, want the caller's", s.Parent())
			}
			if tc.method == "POST" && inHandler.SpanID() != s.SpanContext().SpanID() {
				t.Errorf("the handler's context carries %v, not the server span", inHandler.SpanID())
			}
			if got["http.request.method"] == "" || got["url.path"] == "" {
				t.Errorf("attributes %v", got)
			}
		})
	}
}
