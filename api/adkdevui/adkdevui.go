// Package adkdevui serves Google ADK's own dev UI (the Angular app google-adk ships in
// google/adk/cli/browser) at /dev-ui/, on the same origin as agentengine's ADK-web API,
// as `adk web` does. The files are read from the google-adk installed in the agent
// project's environment, never copied: Locate finds them through the project's
// interpreter.
//
// Routes, as in google-adk's api_server.py: GET /dev-ui redirects to /dev-ui/;
// /dev-ui/assets/config/runtime-config.json is the UI's runtime config (same-origin
// backend, telemetry off); /dev-ui/config is the logo config (none); everything else
// under /dev-ui/ is a file of the directory (index.html for the directory itself). The
// bundled UI keeps "/" (ADK redirects "/" to its UI; agentengine does not).
package adkdevui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Path is where the UI is served, ADK's own path.
const Path = "/dev-ui/"

// inlineHandler is the one inline event handler in ADK's index.html (its stylesheet is
// loaded with media="print" and switched on load); the CSP allows exactly that script
// by its hash instead of allowing inline scripts.
const inlineHandler = "this.media='all'"

// CSP is the Content-Security-Policy of the UI's responses: scripts, connections,
// workers and frames of this origin only; inline styles (Angular components set them) and
// the stylesheet loader above; WebAssembly ('wasm-unsafe-eval', not JavaScript's eval: the
// UI draws agent graphs with Graphviz compiled to WebAssembly); fonts of this origin only, so that a browser fetches
// nothing from elsewhere (ADK's index.html names a web font service: its icons then show
// as their ligature names).
func CSP() string {
	sum := sha256.Sum256([]byte(inlineHandler))
	return "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-hashes' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; " +
		"worker-src 'self' blob:; media-src 'self' blob: data:; frame-src 'self' blob:; object-src 'none'; base-uri 'self'; " +
		"form-action 'self'; frame-ancestors 'self'"
}

// ErrNoDevUI is returned by Locate when the installed google-adk has no dev UI files.
var ErrNoDevUI = errors.New("the installed google-adk has no dev UI files (google/adk/cli/browser/index.html)")

// ErrNoADK is returned by Locate when the interpreter cannot import google.adk.
var ErrNoADK = errors.New("google-adk is not installed in the project's environment")

// findScript prints google-adk's package directory and version; it imports only the
// package's __init__, not its CLI.
const findScript = `import importlib.util, importlib.metadata, os, sys
try:
    spec = importlib.util.find_spec("google.adk")
except ImportError:
    spec = None
if spec is None or not spec.submodule_search_locations:
    sys.exit(3)
try:
    v = importlib.metadata.version("google-adk")
except Exception:
    v = ""
print(list(spec.submodule_search_locations)[0])
print(v)
`

// Location is where an installed google-adk keeps its dev UI.
type Location struct {
	Dir     string // .../google/adk/cli/browser
	Version string // google-adk's version ("" if unknown)
}

// Locate asks python (the project's interpreter) where its google-adk is and returns the
// dev UI directory within it: ErrNoADK without google-adk, ErrNoDevUI when it ships no
// dev UI.
func Locate(ctx context.Context, python string) (Location, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", findScript)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return Location{}, ErrNoADK
		}
		return Location{}, fmt.Errorf("ask %s for google-adk: %w (%s)", python, err, strings.TrimSpace(errb.String()))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	loc := Location{Dir: filepath.Join(strings.TrimSpace(lines[0]), "cli", "browser")}
	if len(lines) > 1 {
		loc.Version = strings.TrimSpace(lines[1])
	}
	if st, err := os.Stat(filepath.Join(loc.Dir, "index.html")); err != nil || st.IsDir() {
		return loc, fmt.Errorf("google-adk %s at %s: %w", loc.Version, filepath.Dir(filepath.Dir(loc.Dir)), ErrNoDevUI)
	}
	return loc, nil
}

// Surface serves the dev UI (an api.Surface).
type Surface struct {
	dir   string
	files http.Handler
	csp   string
}

// New serves the dev UI files of dir (a Location's Dir).
func New(dir string) *Surface {
	return &Surface{dir: dir, files: http.StripPrefix("/dev-ui", http.FileServer(noListing{http.Dir(dir)})), csp: CSP()}
}

// Register mounts the routes. The runtime config routes come before the files, as in
// ADK, so that a stale runtime-config.json in the package is never served.
func (s *Surface) Register(r gin.IRouter) {
	r.GET("/dev-ui", s.redirect)
	r.GET("/dev-ui/*filepath", s.serve)
	r.HEAD("/dev-ui/*filepath", s.serve)
}

// Owns reports the UI's paths.
func (s *Surface) Owns(path string) bool {
	return path == "/dev-ui" || strings.HasPrefix(path, Path)
}

// WriteError writes an error as a line of plain text, under the UI's headers.
func (s *Surface) WriteError(c *gin.Context, status int, _, message string) {
	if c.Writer.Written() {
		return
	}
	s.secure(c)
	c.Data(status, "text/plain; charset=utf-8", []byte(message+"\n"))
	c.Abort()
}

// redirect is ADK's 307 from /dev-ui to /dev-ui/ (keeping the query: the UI reads
// ?app= from it).
func (s *Surface) redirect(c *gin.Context) {
	to := Path
	if q := c.Request.URL.RawQuery; q != "" {
		to += "?" + q
	}
	c.Redirect(http.StatusTemporaryRedirect, to)
}

func (s *Surface) serve(c *gin.Context) {
	s.secure(c)
	c.Header("Cache-Control", "no-cache")
	switch c.Param("filepath") {
	case "/assets/config/runtime-config.json":
		// An empty backendUrl: the API is this origin. Telemetry is off: agentengine
		// sends none.
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, gin.H{"backendUrl": "", "telemetry": false})
		return
	case "/config":
		c.JSON(http.StatusOK, gin.H{"logo_text": nil, "logo_image_url": nil})
		return
	case "/index.html":
		// http.FileServer redirects it to the directory; answer the directory's page.
		c.Request.URL.Path = Path
	}
	s.files.ServeHTTP(c.Writer, c.Request)
}

func (s *Surface) secure(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", s.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}

// noListing serves files and a directory's index.html, never a directory listing.
type noListing struct{ fs http.FileSystem }

func (n noListing) Open(name string) (http.File, error) {
	f, err := n.fs.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		idx, err := n.fs.Open(strings.TrimSuffix(name, "/") + "/index.html")
		if err != nil {
			f.Close()
			return nil, os.ErrNotExist
		}
		idx.Close()
	}
	return f, nil
}
