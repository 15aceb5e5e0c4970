package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestSurface(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	New().Register(r)
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	w := get("/")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `<script type="module" src="/static/js/app.js">`) {
		t.Fatalf("GET / = %d %q", w.Code, w.Body.String())
	}
	if got := w.Header().Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") || strings.Contains(got, "unsafe") {
		t.Errorf("CSP = %q", got)
	}
	if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("headers = %v", w.Header())
	}
	for path, ctype := range map[string]string{"/static/js/app.js": "javascript", "/static/style.css": "text/css"} {
		if w := get(path); w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Type"), ctype) {
			t.Errorf("GET %s = %d %q", path, w.Code, w.Header().Get("Content-Type"))
		}
	}
	for _, path := range []string{"/static/", "/static/js/", "/static/index.html", "/static/../web.go", "/static/nope.js"} {
		if w := get(path); w.Code != http.StatusNotFound && w.Code != http.StatusMovedPermanently {
			t.Errorf("GET %s = %d, want 404", path, w.Code)
		}
	}
	// No inline scripts or styles: the CSP forbids them.
	b, _ := FS.ReadFile("static/index.html")
	if strings.Contains(string(b), "<script>") || strings.Contains(string(b), "style=") || strings.Contains(string(b), " on") && strings.Contains(string(b), "onclick") {
		t.Error("index.html has inline script or style")
	}
}

func TestSurfaceOwnsItsPathsAndWritesPlainErrors(t *testing.T) {
	gin.SetMode(gin.TestMode)
	s := New()
	for path, want := range map[string]bool{"/": true, "/static/js/app.js": true, "/v1/models": false, "/staticx": false} {
		if got := s.Owns(path); got != want {
			t.Errorf("Owns(%q) = %v, want %v", path, got, want)
		}
	}
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	s.WriteError(c, http.StatusUnauthorized, "invalid_api_key", "a key is required")
	if w.Code != http.StatusUnauthorized || w.Body.String() != "a key is required\n" ||
		!strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") || w.Header().Get("Content-Security-Policy") != CSP {
		t.Errorf("WriteError = %d %q %v", w.Code, w.Body.String(), w.Header())
	}
}
