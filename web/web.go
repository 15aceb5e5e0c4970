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

// Register serves the UI: GET/HEAD "/" (index.html, never cached) and "/static/*".
func Register(r gin.IRoutes) {
	sub, err := fs.Sub(FS, "static")
	if err != nil {
		panic("web: " + err.Error()) // the embedded tree always has static/
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic("web: " + err.Error())
	}
	files := http.StripPrefix("/static/", http.FileServer(http.FS(sub)))

	serveIndex := func(c *gin.Context) {
		secure(c)
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	}
	serveStatic := func(c *gin.Context) {
		p := c.Param("filepath")
		if p == "/" || strings.HasSuffix(p, "/") || p == "/index.html" {
			// No directory listings; the page itself lives at "/".
			c.AbortWithStatus(http.StatusNotFound)
			return
		}
		secure(c)
		c.Header("Cache-Control", "no-cache")
		files.ServeHTTP(c.Writer, c.Request)
	}
	r.GET("/", serveIndex)
	r.HEAD("/", serveIndex)
	r.GET("/static/*filepath", serveStatic)
	r.HEAD("/static/*filepath", serveStatic)
}

func secure(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}
