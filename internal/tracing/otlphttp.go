package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// httpExporter sends spans over OTLP/HTTP (protobuf) as otlptracehttp does, encoding
// them with encoder into a buffer it reuses. It supports what a plain http or https
// endpoint needs (the endpoint, headers, timeout and gzip compression from the
// OTEL_EXPORTER_OTLP_* variables, retries of 429/502/503/504 with Retry-After); for
// anything else (custom certificates, the insecure switch, another scheme) New uses
// otlptracehttp.
type httpExporter struct {
	url     string
	headers map[string]string
	gzip    bool
	client  *http.Client
	// retry's backoff: the first wait, the longest, and how long to keep trying.
	retryInitial, retryMax, retryElapsed time.Duration

	mu   sync.Mutex // one export at a time: they share enc and the buffers
	enc  encoder
	zbuf bytes.Buffer
	zw   *gzip.Writer
	resp bytes.Buffer
	done atomic.Bool
}

// The OTLP exporters' defaults: the request timeout, and the retry backoff.
const (
	defaultOTLPTimeout  = 10 * time.Second
	defaultRetryInitial = 5 * time.Second
	defaultRetryMax     = 30 * time.Second
	defaultRetryElapsed = time.Minute
	maxResponseBytes    = 64 << 10
)

// httpExporterConfig reads the OTEL_EXPORTER_OTLP_* variables the way otlptracehttp
// does. ok is false when they ask for something httpExporter does not do (then
// otlptracehttp is used): no endpoint set (its default is https://localhost:4318),
// another scheme than http or https, a certificate or client key, or the insecure
// switch.
func httpExporterConfig(getenv func(string) string) (e *httpExporter, ok bool) {
	env := func(k string) string { return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + k)) }
	for _, k := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "INSECURE"} {
		if env(k) != "" || env("TRACES_"+k) != "" {
			return nil, false
		}
	}
	var target string
	if v := env("TRACES_ENDPOINT"); v != "" {
		u, err := url.Parse(v)
		if err != nil {
			return nil, false
		}
		if u.Path == "" {
			u.Path = "/"
		}
		target = endpointURL(u)
	} else if v := env("ENDPOINT"); v != "" {
		u, err := url.Parse(v)
		if err != nil {
			return nil, false
		}
		u.Path = path.Join(u.Path, "/v1/traces")
		target = endpointURL(u)
	}
	if target == "" {
		return nil, false
	}
	e = &httpExporter{url: target, retryInitial: defaultRetryInitial, retryMax: defaultRetryMax, retryElapsed: defaultRetryElapsed}
	if v := env("TRACES_HEADERS"); v != "" {
		e.headers = parseHeaders(v)
	} else if v := env("HEADERS"); v != "" {
		e.headers = parseHeaders(v)
	}
	compression := env("COMPRESSION")
	if v := env("TRACES_COMPRESSION"); v != "" {
		compression = v
	}
	e.gzip = compression == "gzip"
	timeout := defaultOTLPTimeout
	for _, k := range []string{"TIMEOUT", "TRACES_TIMEOUT"} { // the second wins
		if v := env(k); v != "" {
			if ms, err := strconv.Atoi(v); err == nil {
				timeout = time.Duration(ms) * time.Millisecond
			}
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	e.client = &http.Client{Transport: transport, Timeout: timeout}
	return e, true
}

// endpointURL is u as the request's URL: scheme, host and path only (otlptracehttp
// drops a query or fragment too), or "" for a scheme other than http and https.
func endpointURL(u *url.URL) string {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return ""
	}
	if u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host, Path: u.Path}).String()
}

// parseHeaders reads "k1=v1,k2=v2" (values URL-encoded), skipping malformed pairs as
// the OTLP exporters do.
func parseHeaders(s string) map[string]string {
	h := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, found := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !found || k == "" || strings.ContainsAny(k, " \t\r\n:\"(),/;<=>?@[\\]{}") {
			continue
		}
		val, err := url.PathUnescape(v)
		if err != nil {
			continue
		}
		h[k] = strings.TrimSpace(val)
	}
	return h
}

var _ sdktrace.SpanExporter = (*httpExporter)(nil)

// ExportSpans implements sdktrace.SpanExporter.
func (e *httpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	ended := make([]endedSpan, len(spans))
	for i, s := range spans {
		ended[i] = s
	}
	return e.exportEnded(ctx, ended)
}

// exportEnded encodes spans and posts them.
func (e *httpExporter) exportEnded(ctx context.Context, spans []endedSpan) error {
	if e.done.Load() {
		return errors.New("tracing: OTLP exporter is shut down")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	body, n := e.enc.encode(spans)
	if n == 0 {
		return nil
	}
	if e.gzip {
		if e.zw == nil {
			e.zw = gzip.NewWriter(&e.zbuf)
		}
		e.zbuf.Reset()
		e.zw.Reset(&e.zbuf)
		if _, err := e.zw.Write(body); err != nil {
			return fmt.Errorf("tracing: OTLP export: %w", err)
		}
		if err := e.zw.Close(); err != nil {
			return fmt.Errorf("tracing: OTLP export: %w", err)
		}
		body = e.zbuf.Bytes()
	}
	if err := e.send(ctx, body); err != nil {
		return fmt.Errorf("tracing: OTLP export of %d spans to %s: %w", n, e.url, err)
	}
	return nil
}

// send posts body, retrying what the receiver says is temporary with exponential
// backoff (or its Retry-After) until retryElapsed has passed or ctx is done.
func (e *httpExporter) send(ctx context.Context, body []byte) error {
	deadline := time.Now().Add(e.retryElapsed)
	wait := e.retryInitial
	for {
		retry, throttle, err := e.post(ctx, body)
		if err == nil || !retry {
			return err
		}
		// Jitter of ±50% (the exporters' backoff randomises too), at least the
		// receiver's Retry-After.
		d := wait/2 + rand.N(wait+1) //nolint:gosec // jitter, not a secret
		d = max(d, throttle)
		if time.Now().Add(d).After(deadline) {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, e.retryMax)
	}
}

// post sends body once. retry says whether the failure is temporary, throttle is the
// receiver's Retry-After.
func (e *httpExporter) post(ctx context.Context, body []byte) (retry bool, throttle time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("User-Agent", "agentengine OTLP exporter")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	// After the configured headers, as otlptracehttp does: they cannot change the body's
	// type or encoding.
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		return errors.As(err, &ue) && ue.Timeout(), 0, err
	}
	defer resp.Body.Close()
	e.resp.Reset()
	if _, err := e.resp.ReadFrom(io.LimitReader(resp.Body, maxResponseBytes)); err != nil {
		return false, 0, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if e.resp.Len() == 0 || resp.Header.Get("Content-Type") != "application/x-protobuf" {
			return false, 0, nil
		}
		rejected, msg, err := partialSuccess(e.resp.Bytes())
		if err != nil {
			return false, 0, fmt.Errorf("reading the response: %w", err)
		}
		if rejected != 0 || msg != "" {
			return false, 0, fmt.Errorf("OTLP partial success: %s (%d spans rejected)", msg, rejected)
		}
		return false, 0, nil
	}
	text := strings.TrimSpace(e.resp.String())
	if text == "" {
		text = "(empty)"
	}
	err = fmt.Errorf("%s (body: %s)", resp.Status, text)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), err
	}
	return false, 0, err
}

// retryAfter reads a Retry-After header: seconds or an HTTP date (0 when absent).
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, int64(time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// Shutdown implements sdktrace.SpanExporter: later exports fail (the batch processor
// has flushed before it calls this).
func (e *httpExporter) Shutdown(ctx context.Context) error {
	e.done.Store(true)
	e.client.CloseIdleConnections()
	return ctx.Err()
}
