package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func newRuntime(t *testing.T) *host.Runtime {
	t.Helper()
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		stop()
	})
	return rt
}

// panicky is a surface whose handler panics, to test recovery.
type panicky struct{}

func (panicky) Register(r gin.IRouter) { r.GET("/boom", func(*gin.Context) { panic("boom") }) }
func (panicky) Owns(string) bool       { return false } // its errors are the first surface's
func (panicky) WriteError(c *gin.Context, status int, _, message string) {
	c.String(status, message)
}

type result struct {
	status int
	header http.Header
	body   map[string]any
}

func serve(t *testing.T, r http.Handler, method, target, body string, headers ...string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Host = "127.0.0.1:8080"
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	res := result{status: w.Code, header: w.Header()}
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &res.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %s", method, target, w.Body.Bytes())
		}
	}
	return res
}

func errCode(r result) string {
	e, _ := r.body["error"].(map[string]any)
	if e == nil {
		return ""
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			return "missing " + k
		}
	}
	c, _ := e["code"].(string)
	return c
}

func TestSecurity(t *testing.T) {
	rt := newRuntime(t)
	open := newRouter(Config{Runtime: rt, Surfaces: []Surface{panicky{}}})
	locked := newRouter(Config{Runtime: rt, AuthToken: "s3cret", MaxBodyBytes: 256,
		AllowedOrigins: []string{"http://localhost:5173"}, AllowedHosts: []string{"agents.internal"}})
	req := `{"model":"echo","input":"hi"}`

	cases := []struct {
		name           string
		r              http.Handler
		method, target string
		body           string
		headers        []string
		status         int
		code           string
	}{
		{"health", open, "GET", "/health", "", nil, 200, ""},
		{"loopback names", open, "GET", "/v1/models", "", []string{"Host", "localhost:9000"}, 200, ""},
		{"ipv6 loopback", open, "GET", "/v1/models", "", []string{"Host", "[::1]:9000"}, 200, ""},
		{"dns rebinding", open, "GET", "/v1/models", "", []string{"Host", "evil.example:8080"}, 403, "forbidden_host"},
		{"configured host", locked, "GET", "/v1/models", "", []string{"Host", "agents.internal", "Authorization", "Bearer s3cret"}, 200, ""},
		{"cross origin", open, "POST", "/v1/responses", req, []string{"Origin", "http://evil.example"}, 403, "forbidden_origin"},
		{"null origin", open, "POST", "/v1/responses", req, []string{"Origin", "null"}, 403, "forbidden_origin"},
		{"cross-site fetch", open, "GET", "/v1/models", "", []string{"Sec-Fetch-Site", "cross-site"}, 403, "forbidden_origin"},
		{"same origin", open, "POST", "/v1/responses", req, []string{"Origin", "http://127.0.0.1:8080"}, 200, ""},
		{"allowed origin", locked, "GET", "/v1/models", "", []string{"Origin", "http://localhost:5173", "Authorization", "Bearer s3cret"}, 200, ""},
		{"no token", locked, "GET", "/v1/models", "", nil, 401, "invalid_api_key"},
		{"wrong token", locked, "GET", "/v1/models", "", []string{"Authorization", "Bearer nope"}, 401, "invalid_api_key"},
		{"x-api-key", locked, "GET", "/v1/models", "", []string{"X-Api-Key", "s3cret"}, 200, ""},
		{"wrong x-api-key", locked, "GET", "/v1/models", "", []string{"X-Api-Key", "nope"}, 401, "invalid_api_key"},
		{"lower-case scheme", locked, "GET", "/v1/models", "", []string{"Authorization", "bearer s3cret"}, 200, ""},
		{"upper-case scheme", locked, "GET", "/v1/models", "", []string{"Authorization", "BEARER s3cret"}, 200, ""},
		{"other scheme", locked, "GET", "/v1/models", "", []string{"Authorization", "Basic s3cret"}, 401, "invalid_api_key"},
		{"token without scheme", locked, "GET", "/v1/models", "", []string{"Authorization", "s3cret"}, 401, "invalid_api_key"},
		{"health without token", locked, "GET", "/health", "", nil, 200, ""},
		{"body too large", locked, "POST", "/v1/responses", `{"model":"echo","input":"` + strings.Repeat("x", 300) + `"}`, []string{"Authorization", "Bearer s3cret"}, 413, "request_too_large"},
		{"not json", open, "POST", "/v1/responses", req, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"no route", open, "GET", "/v2/nothing", "", nil, 404, "not_found"},
		{"wrong method", open, "PUT", "/v1/responses", "", nil, 405, "method_not_allowed"},
		{"panic", open, "GET", "/boom", "", nil, 500, "server_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := serve(t, tc.r, tc.method, tc.target, tc.body, tc.headers...)
			if res.status != tc.status || errCode(res) != tc.code {
				t.Fatalf("status %d code %q (%v); want %d %q", res.status, errCode(res), res.body, tc.status, tc.code)
			}
		})
	}

	t.Run("health lists agents only when authorised", func(t *testing.T) {
		if a := serve(t, open, "GET", "/health", "").body["agents"].([]any); len(a) != 1 || a[0] != "echo" {
			t.Errorf("open: %v", a)
		}
		if a := serve(t, locked, "GET", "/health", "").body["agents"].([]any); len(a) != 0 {
			t.Errorf("locked without token: %v", a)
		}
		if a := serve(t, locked, "GET", "/health", "", "Authorization", "Bearer s3cret").body["agents"].([]any); len(a) != 1 {
			t.Errorf("locked with token: %v", a)
		}
	})
	t.Run("cors", func(t *testing.T) {
		res := serve(t, locked, "OPTIONS", "/v1/responses", "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST")
		if res.status != 204 || res.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || !strings.Contains(res.header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight %d %v", res.status, res.header)
		}
		if res := serve(t, locked, "OPTIONS", "/v1/responses", "", "Origin", "http://evil.example", "Access-Control-Request-Method", "POST"); res.status != 403 {
			t.Errorf("disallowed preflight %d", res.status)
		}
		if res := serve(t, open, "POST", "/v1/responses", req, "Origin", "http://127.0.0.1:8080"); res.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("same-origin requests need no CORS headers")
		}
	})
	t.Run("chunked body over the limit", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/v1/responses", io.NopCloser(strings.NewReader(`{"model":"echo","input":"`+strings.Repeat("x", 300)+`"}`)))
		r.Host, r.ContentLength = "127.0.0.1", -1
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer s3cret")
		w := httptest.NewRecorder()
		locked.ServeHTTP(w, r)
		if w.Code != 413 || !strings.Contains(w.Body.String(), "request_too_large") {
			t.Errorf("%d %s", w.Code, w.Body)
		}
	})
}

// The router serves the OpenAI surface end to end over a real listener.
func TestRouterEndToEnd(t *testing.T) {
	srv := httptest.NewServer(newRouter(Config{Runtime: newRuntime(t)}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"echo","input":"through the router"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r["output_text"] != "Echo: through the router" {
		t.Fatalf("%v %v", err, r)
	}
}
