// Package web is the bundled browser UI that `agentengine run` serves at "/": plain
// static files (HTML, ES modules, CSS; no framework, no build step) embedded in the
// binary. The UI talks only to the Web UI action API (/agentengine/api/v1/<Action>).
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// FS holds the UI's files under "static/".
//
//go:embed static
var FS embed.FS

// CSP is the Content-Security-Policy of every UI response: only this origin's scripts,
// styles, connections and frames; images also from data: and blob: URLs.
const CSP = "default-src 'self'; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; " +
	"script-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"

// Surface serves the UI (an api.Surface): GET/HEAD "/" (index.html, never cached) and
// "/static/*".
type Surface struct {
	index []byte
	files http.Handler
}

// New builds the surface from the embedded files.
func New() *Surface {
	sub, err := fs.Sub(FS, "static")
	if err != nil {
		panic("web: " + err.Error()) // the embedded tree always has static/
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic("web: " + err.Error())
	}
	return &Surface{index: index, files: http.StripPrefix("/static/", http.FileServer(http.FS(sub)))}
}

// Register mounts the UI's routes.
func (s *Surface) Register(r gin.IRouter) {
	r.GET("/", s.serveIndex)
	r.HEAD("/", s.serveIndex)
	r.GET("/static/*filepath", s.serveStatic)
	r.HEAD("/static/*filepath", s.serveStatic)
}

// Owns reports the UI's paths: the router's errors there (a missing key, a refused
// origin) are written for a browser by WriteError.
func (s *Surface) Owns(path string) bool {
	return path == "/" || strings.HasPrefix(path, "/static/")
}

// WriteError writes an error as a line of plain text, under the UI's headers.
func (s *Surface) WriteError(c *gin.Context, status int, _, message string) {
	if c.Writer.Written() {
		return
	}
	secure(c)
	c.Data(status, "text/plain; charset=utf-8", []byte(message+"\n"))
	c.Abort()
}

func (s *Surface) serveIndex(c *gin.Context) {
	secure(c)
	c.Header("Cache-Control", "no-cache")
	c.Data(http.StatusOK, "text/html; charset=utf-8", s.index)
}

func (s *Surface) serveStatic(c *gin.Context) {
	p := c.Param("filepath")
	if p == "/" || strings.HasSuffix(p, "/") || p == "/index.html" {
		// No directory listings; the page itself lives at "/".
		c.AbortWithStatus(http.StatusNotFound)
		return
	}
	secure(c)
	c.Header("Cache-Control", "no-cache")
	s.files.ServeHTTP(c.Writer, c.Request)
}

func secure(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}
