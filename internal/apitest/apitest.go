// Package apitest holds the HTTP test scaffolding the API surfaces share: a test server
// whose cleanup also ends the runtime, and a request helper.
package apitest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
)

// Serve starts an httptest server for h; cleanup closes it, then the runtime (failing the
// test if runs do not end), then stop (the in-process runner).
func Serve(t testing.TB, h http.Handler, rt *host.Runtime, stop func()) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("runtime close: %v", err)
		}
		stop()
	})
	return srv
}

// Do sends a request to base+path and returns the status, headers and body. A non-empty
// body is sent as JSON; headers are name, value pairs.
func Do(t testing.TB, base, method, path, body string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}
