package adkdevui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func fakeUI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "assets", "config"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<html><base href="./"><script src="./main.js" type="module"></script></html>`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "main.js"), []byte(`console.log(1)`), 0o644))
	// A stale config in the package is never what the UI reads.
	must(os.WriteFile(filepath.Join(dir, "assets", "config", "runtime-config.json"), []byte(`{"backendUrl":"http://elsewhere"}`), 0o644))
	return dir
}

func TestSurfaceRoutes(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	New(fakeUI(t)).Register(r)
	do := func(method, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		return w
	}
	tests := []struct {
		path     string
		status   int
		body     string // a substring of the body
		ctype    string
		location string
	}{
		{path: "/dev-ui", status: http.StatusTemporaryRedirect, location: "/dev-ui/"},
		{path: "/dev-ui?app=assistant", status: http.StatusTemporaryRedirect, location: "/dev-ui/?app=assistant"},
		{path: "/dev-ui/", status: http.StatusOK, body: `src="./main.js"`, ctype: "text/html"},
		{path: "/dev-ui/index.html", status: http.StatusOK, body: `src="./main.js"`, ctype: "text/html"},
		{path: "/dev-ui/main.js", status: http.StatusOK, body: "console.log", ctype: "javascript"},
		{path: "/dev-ui/assets/config/runtime-config.json", status: http.StatusOK, body: `{"backendUrl":"","telemetry":false}`, ctype: "application/json"},
		{path: "/dev-ui/config", status: http.StatusOK, body: `{"logo_image_url":null,"logo_text":null}`, ctype: "application/json"},
		{path: "/dev-ui/assets/", status: http.StatusNotFound},
		{path: "/dev-ui/nope.js", status: http.StatusNotFound},
		{path: "/dev-ui/../go.mod", status: http.StatusNotFound},
	}
	for _, tc := range tests {
		w := do(http.MethodGet, tc.path)
		if w.Code != tc.status {
			t.Errorf("GET %s = %d, want %d (%s)", tc.path, w.Code, tc.status, w.Body.String())
			continue
		}
		if tc.body != "" && !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("GET %s body = %q, want it to contain %q", tc.path, w.Body.String(), tc.body)
		}
		if tc.ctype != "" && !strings.Contains(w.Header().Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s Content-Type = %q", tc.path, w.Header().Get("Content-Type"))
		}
		if tc.location != "" && w.Header().Get("Location") != tc.location {
			t.Errorf("GET %s Location = %q, want %q", tc.path, w.Header().Get("Location"), tc.location)
		}
		if tc.status == http.StatusOK {
			csp := w.Header().Get("Content-Security-Policy")
			script := ""
			for _, d := range strings.Split(csp, ";") {
				if d = strings.TrimSpace(d); strings.HasPrefix(d, "script-src ") {
					script = d
				}
			}
			// This origin's scripts, WebAssembly and the one inline handler by its hash:
			// no inline scripts, no eval.
			if !strings.Contains(script, "'self'") || !strings.Contains(script, "'sha256-") ||
				strings.Contains(script, "'unsafe-inline'") || strings.Contains(script, " 'unsafe-eval'") {
				t.Errorf("GET %s script-src = %q", tc.path, script)
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s lacks nosniff", tc.path)
			}
		}
	}
	var cfg map[string]any
	if err := json.Unmarshal(do(http.MethodGet, "/dev-ui/assets/config/runtime-config.json").Body.Bytes(), &cfg); err != nil || cfg["backendUrl"] != "" {
		t.Errorf("runtime config = %v %v", cfg, err)
	}
}

func TestSurfaceOwnsItsPaths(t *testing.T) {
	s := New(t.TempDir())
	for path, want := range map[string]bool{"/dev-ui": true, "/dev-ui/x.js": true, "/": false, "/dev-uix": false, "/dev/apps/a/build_graph": false} {
		if got := s.Owns(path); got != want {
			t.Errorf("Owns(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	// A fake google-adk package on PYTHONPATH, without and then with its dev UI.
	root := t.TempDir()
	pkg := filepath.Join(root, "google", "adk")
	if err := os.MkdirAll(filepath.Join(pkg, "cli"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "__init__.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", root)
	if _, err := Locate(context.Background(), python); !errors.Is(err, ErrNoDevUI) {
		t.Fatalf("Locate without browser/ = %v, want ErrNoDevUI", err)
	}
	browser := filepath.Join(pkg, "cli", "browser")
	if err := os.MkdirAll(browser, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(browser, "index.html"), []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	loc, err := Locate(context.Background(), python)
	if err != nil || loc.Dir != browser {
		t.Fatalf("Locate = %+v, %v; want %s", loc, err, browser)
	}
	t.Setenv("PYTHONPATH", t.TempDir())
	if _, err := Locate(context.Background(), python); !errors.Is(err, ErrNoADK) {
		t.Fatalf("Locate without google-adk = %v, want ErrNoADK", err)
	}
}
