package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// startServer serves r with NewServer's settings on a loopback port.
func startServer(t *testing.T, r http.Handler, tune func(*http.Server)) string {
	t.Helper()
	srv := NewServer(r)
	if tune != nil {
		tune(srv)
	}
	ts := httptest.NewUnstartedServer(r)
	ts.Config = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// rawRequest sends head and part of a body and returns what the server answers before
// it closes the connection (or the client's own limit ends the wait).
func rawRequest(t *testing.T, addr, head, partialBody string) (string, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head+partialBody); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(bufio.NewReader(conn))
	closed := err == nil // EOF: the server closed the connection
	return string(b), closed
}

// A body sent too slowly (here: never finished) does not hold the connection past the
// body read timeout, with or without a token; without one the 401 comes before the body.
func TestSlowBodyIsCutOff(t *testing.T) {
	rt := newRuntime(t)
	for _, tt := range []struct {
		name, token, authHeader string
		wantStatus              string
	}{
		{"no token configured", "", "", ""},
		{"missing token", "secret", "", "401"},
		{"valid token", "secret", "Authorization: Bearer secret\r\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(Config{Runtime: rt, AuthToken: tt.token, BodyReadTimeout: 300 * time.Millisecond})
			addr := startServer(t, r, nil)
			head := "POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + tt.authHeader +
				"Content-Length: 1000\r\n\r\n"
			out, closed := rawRequest(t, addr, head, `{"model":"echo",`)
			if !closed {
				t.Fatalf("connection still open after 10 s with an unfinished body; got %q", out)
			}
			if tt.wantStatus != "" && !strings.HasPrefix(out, "HTTP/1.1 "+tt.wantStatus) {
				t.Errorf("answer %q, want %s", out, tt.wantStatus)
			}
		})
	}
}

// An idle keep-alive connection is closed after the idle timeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	rt := newRuntime(t)
	addr := startServer(t, newRouter(Config{Runtime: rt}), func(s *http.Server) { s.IdleTimeout = 300 * time.Millisecond })
	out, closed := rawRequest(t, addr, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "")
	if !closed || !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Fatalf("closed %v, answer %q", closed, out)
	}
}

// A long stream is not cut by the body read timeout once the body has been read.
func TestStreamOutlivesBodyReadTimeout(t *testing.T) {
	rt := newRuntime(t)
	r := newRouter(Config{Runtime: rt, BodyReadTimeout: 100 * time.Millisecond})
	addr := startServer(t, r, nil)
	resp, err := http.Post("http://"+addr+"/v1/responses", "application/json",
		strings.NewReader(`{"model":"echo","stream":true,"input":"hello world","model_options":{"delay_ms":150}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(b), "response.completed") {
		t.Fatalf("stream: %v\n%s", err, b)
	}
}

// A Content-Length over the limit is refused at once, before any body is read, in the
// owning surface's shape, and the connection is closed: also for a client that sends
// only headers, as one waiting on "Expect: 100-continue" does (it is never told to go
// on). The body read timeout is left long: the answer must not wait for it.
func TestOversizedContentLengthRefusedAtOnce(t *testing.T) {
	rt := newRuntime(t)
	r := newRouter(Config{Runtime: rt, MaxBodyBytes: 1 << 10, Surfaces: []Surface{shaped{"a", "/a/"}}})
	addr := startServer(t, r, nil)
	const waiting = "Expect: 100-continue\r\n"
	for _, tt := range []struct{ name, host, path, expect, want string }{
		{"openai", "127.0.0.1", "/v1/responses", "", `"code":"request_too_large"`},
		{"openai waiting", "127.0.0.1", "/v1/responses", waiting, `"code":"request_too_large"`},
		{"other surface", "127.0.0.1", "/a/x", "", "a 413 request_too_large"},
		{"other surface waiting", "127.0.0.1", "/a/x", waiting, "a 413 request_too_large"},
		// Refused before the size is looked at: as promptly.
		{"forbidden host", "evil.example", "/v1/responses", waiting, `"code":"forbidden_host"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head := "POST " + tt.path + " HTTP/1.1\r\nHost: " + tt.host + "\r\nContent-Type: application/json\r\n" + tt.expect +
				"Content-Length: 67108864\r\n\r\n"
			out, closed := rawRequest(t, addr, head, "")
			if !closed {
				t.Fatalf("connection still open 10 s after the headers; got %q", out)
			}
			if !strings.HasPrefix(out, "HTTP/1.1 4") || !strings.Contains(out, tt.want) || strings.Contains(out, "100 Continue") {
				t.Errorf("answer %q", out)
			}
			if !strings.Contains(strings.ToLower(out), "connection: close") {
				t.Errorf("the answer does not say the connection closes: %q", out)
			}
		})
	}
}
