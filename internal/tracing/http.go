package tracing

import (
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// serverMiddleware starts each HTTP request's server span with the HTTP semantic
// conventions' server attributes (method, scheme, path, route, status, client, user
// agent, protocol version), joining a client's traceparent. It is ours rather than
// OpenTelemetry's gin middleware because that one costs a turn several times more: it
// records HTTP metrics we keep elsewhere, computes attributes twice (spans and
// metrics), copies the request twice and sets attributes piecemeal. The attributes are
// set once, when the request is answered (no sampler of ours reads them at start).
func serverMiddleware(tracer trace.Tracer, prop propagation.TextMapPropagator) gin.HandlerFunc {
	// The attributes are built in a pooled slice: the SDK copies them into the span.
	attrPool := sync.Pool{New: func() any { s := make([]attribute.KeyValue, 0, 11); return &s }}
	serverKind := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)} // made once, not per request
	return func(c *gin.Context) {
		r := c.Request
		ctx := r.Context()
		if r.Header.Get("traceparent") != "" {
			ctx = prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		method, known := httpMethod(r.Method)
		route := c.FullPath()
		name := method
		if route != "" {
			name = method + " " + route
		}
		ctx, span := tracer.Start(ctx, name, serverKind...)
		c.Request = r.WithContext(ctx) // a sampled-out span's context travels on too
		c.Next()
		if !span.IsRecording() {
			span.End()
			return
		}

		status := c.Writer.Status()
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		pooled := attrPool.Get().(*[]attribute.KeyValue)
		attrs := append((*pooled)[:0], semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme(scheme),
			semconv.URLPath(r.URL.Path), semconv.HTTPResponseStatusCode(status),
			semconv.NetworkProtocolVersion(protoVersion(r)))
		if !known {
			attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
		}
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, semconv.ClientAddress(host))
		}
		if ua := r.UserAgent(); ua != "" {
			attrs = append(attrs, semconv.UserAgentOriginal(ua))
		}
		if status >= 500 {
			// Server spans fail on 5xx only (a 4xx is the client's error).
			attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(status)))
			span.SetStatus(codes.Error, "")
		}
		span.SetAttributes(attrs...)
		span.End()
		clear(attrs) // the pool keeps no request's strings
		*pooled = attrs[:0]
		attrPool.Put(pooled)
	}
}

// httpMethod is the method as the conventions name it: one of the known methods, or
// "_OTHER" (false) for any other.
func httpMethod(m string) (string, bool) {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch,
		http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m, true
	}
	return "_OTHER", false
}

// protoVersion is network.protocol.version of the request ("1.1", "2").
func protoVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return "1.1"
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return strconv.Itoa(r.ProtoMajor) + "." + strconv.Itoa(r.ProtoMinor)
}
