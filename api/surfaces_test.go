package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/openai"
)

// newRouter is NewRouter with the OpenAI-compatible surface first, as `run` mounts it:
// these tests drive the router through it.
func newRouter(cfg Config) *gin.Engine {
	cfg.Surfaces = append([]Surface{openai.New(openai.Config{Runtime: cfg.Runtime})}, cfg.Surfaces...)
	return NewRouter(cfg)
}

// shaped is a surface that owns the paths under its prefix and writes its errors as
// "<name> <status> <code>".
type shaped struct{ name, prefix string }

func (s shaped) Register(gin.IRouter)  {}
func (s shaped) Owns(path string) bool { return strings.HasPrefix(path, s.prefix) }
func (s shaped) WriteError(c *gin.Context, status int, code, _ string) {
	c.String(status, "%s %d %s", s.name, status, code)
}

// The router's errors on a path are in the shape of the surface that owns it; the first
// surface's shape is that of paths nobody owns, whatever the order of the others.
func TestErrorsTakeTheOwningSurfacesShape(t *testing.T) {
	rt := newRuntime(t)
	a, b := shaped{"a", "/a/"}, shaped{"b", "/b/"}
	for _, tc := range []struct {
		surfaces []Surface
		path     string
		want     string
	}{
		{[]Surface{a, b}, "/a/x", "a 404 not_found"},
		{[]Surface{a, b}, "/b/x", "b 404 not_found"},
		{[]Surface{b, a}, "/a/x", "a 404 not_found"},
		{[]Surface{a, b}, "/elsewhere", "a 404 not_found"},
		{[]Surface{b, a}, "/elsewhere", "b 404 not_found"},
		{nil, "/elsewhere", `{"error":{"code":"not_found","message":"no route for GET /elsewhere"}}`},
	} {
		w := httptest.NewRecorder()
		NewRouter(Config{Runtime: rt, Surfaces: tc.surfaces}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+tc.path, nil))
		if w.Code != http.StatusNotFound || w.Body.String() != tc.want {
			t.Errorf("GET %s with %v = %d %q, want %q", tc.path, tc.surfaces, w.Code, w.Body.String(), tc.want)
		}
	}
}
