package tracing

import (
	"net"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// serverMiddleware starts each HTTP request's server span with the HTTP semantic
// conventions' server attributes (method, scheme, path, route, status, client, user
// agent, protocol version), joining a client's traceparent. It is ours rather than
// OpenTelemetry's gin middleware because that one costs a turn several times more: it
// records HTTP metrics we keep elsewhere, computes attributes twice (spans and
// metrics), copies the request twice and sets attributes piecemeal. The attributes are
// set once, when the request is answered (no sampler of ours reads them at start), as
// a source: the span keeps the request's few strings, not eight key-values.
func serverMiddleware(tracer trace.Tracer, prop propagation.TextMapPropagator) gin.HandlerFunc {
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

		a := &serverAttrs{method: method, path: r.URL.Path, route: route, status: c.Writer.Status(),
			proto: protoVersion(r), userAgent: r.UserAgent(), scheme: "http"}
		if !known {
			a.methodOriginal = r.Method
		}
		if r.TLS != nil {
			a.scheme = "https"
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			a.client = host
		}
		if a.status >= 500 {
			// Server spans fail on 5xx only (a 4xx is the client's error).
			span.SetStatus(codes.Error, "")
		}
		spanrec.SetAttributes(span, a)
		span.End()
	}
}

// serverAttrs are an HTTP server span's attributes ("" and 0 for those not set).
type serverAttrs struct {
	method, methodOriginal, scheme, path, route, proto, client, userAgent string
	status                                                                int
}

// AppendAttributes implements spanrec.Source.
func (a *serverAttrs) AppendAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	dst = append(dst, semconv.HTTPRequestMethodKey.String(a.method), semconv.URLScheme(a.scheme),
		semconv.URLPath(a.path), semconv.HTTPResponseStatusCode(a.status), semconv.NetworkProtocolVersion(a.proto))
	if a.methodOriginal != "" {
		dst = append(dst, semconv.HTTPRequestMethodOriginal(a.methodOriginal))
	}
	if a.route != "" {
		dst = append(dst, semconv.HTTPRoute(a.route))
	}
	if a.client != "" {
		dst = append(dst, semconv.ClientAddress(a.client))
	}
	if a.userAgent != "" {
		dst = append(dst, semconv.UserAgentOriginal(a.userAgent))
	}
	if a.status >= 500 {
		dst = append(dst, semconv.ErrorTypeKey.String(strconv.Itoa(a.status)))
	}
	return dst
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
