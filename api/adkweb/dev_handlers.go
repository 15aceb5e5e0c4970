package adkweb

import (
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// The dev routes ADK's dev UI calls besides sessions and runs, at google-adk 2.x's
// paths (/dev/apps/{app}/...) and the earlier ones. What agentengine does not offer
// (agent graphs, evaluations, the YAML builder, live audio and video) is answered in the
// shape the UI expects for "nothing there" or with an error it shows, never with a 404
// it would throw on.

// Messages of the features not offered, shown by the UI or returned to API clients.
const (
	noEvals     = "agentengine does not run ADK evaluations: there are no eval sets or results"
	noLive      = "agentengine does not serve live audio/video (run_live); use text chat"
	noTelemetry = "agentengine sends no telemetry: there is no consent to record"
)

func (h *Handler) registerDev(r gin.IRouter) {
	r.GET("/config/telemetry", handle(h.getTelemetry))
	r.POST("/config/telemetry", handle(h.setTelemetry))
	r.GET("/run_live", h.runLive)
	for _, p := range []struct{ prefix, suffix string }{
		{"/dev/apps/:app", ""}, // google-adk 2.x
		{"/apps/:app", ""},     // google-adk 1.x
	} {
		g := r.Group(p.prefix)
		g.GET("/eval_sets", handle(h.list(false)))
		g.GET("/eval-sets", handle(h.list(true, "evalSetIds")))
		g.GET("/eval_results", handle(h.list(false)))
		g.GET("/eval-results", handle(h.list(true, "evalResultIds")))
		g.GET("/metrics-info", handle(h.list(true, "metricsInfo")))
		g.POST("/eval-sets", handle(h.noEvals))
		g.POST("/eval_sets/:set", handle(h.noEvals))
		g.POST("/eval-sets/:set/add-session", handle(h.noEvals))
		g.POST("/eval_sets/:set/add_session", handle(h.noEvals))
		g.POST("/eval-sets/:set/run", handle(h.noEvals))
		g.POST("/eval_sets/:set/run_eval", handle(h.noEvals))
	}
	r.GET("/dev/apps/:app/build_graph", handle(h.buildGraph))
	r.GET("/dev/build_graph/:app", handle(h.buildGraph))
	r.GET("/dev/apps/:app/build_graph_image", handle(h.buildGraphImage(true)))
	r.GET("/dev/build_graph_image/:app", handle(h.buildGraphImage(false)))
	r.GET("/dev/apps/:app/builder", handle(h.builder))
	r.GET("/builder/app/:app", handle(h.builder))
}

// devOwns reports the dev routes' paths (Owns).
func devOwns(path string) bool {
	switch path {
	case "/config/telemetry", "/run_live":
		return true
	}
	return strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/builder/app/")
}

// app resolves the path's app (404 in ADK's words when it is not hosted).
func (h *Handler) app(c *gin.Context) (string, *httpError) {
	a, err := h.rt.ResolveAgent(c.Param("app"))
	if err != nil || c.Param("app") == "" {
		return "", appNotFound(c.Param("app"))
	}
	return a.Name, nil
}

// getTelemetry serves GET /config/telemetry: off (agentengine reports nothing), so the
// UI asks for no consent.
func (h *Handler) getTelemetry(c *gin.Context) *httpError {
	httpx.WriteJSON(c, http.StatusOK, gin.H{"telemetry": false})
	return nil
}

// setTelemetry serves POST /config/telemetry: ADK's header check, then a refusal.
func (h *Handler) setTelemetry(c *gin.Context) *httpError {
	if c.GetHeader("X-ADK-Telemetry-Request") != "true" {
		return detail(http.StatusBadRequest, "Forbidden: missing required security header")
	}
	return detail(http.StatusBadRequest, noTelemetry)
}

// list answers a list route of a feature with nothing in it: a bare list (ADK's
// deprecated routes), or an object with the list under key.
func (h *Handler) list(wrapped bool, key ...string) func(*gin.Context) *httpError {
	return func(c *gin.Context) *httpError {
		if _, aerr := h.app(c); aerr != nil {
			return aerr
		}
		if !wrapped {
			httpx.WriteJSON(c, http.StatusOK, []string{})
			return nil
		}
		httpx.WriteJSON(c, http.StatusOK, map[string][]string{key[0]: {}})
		return nil
	}
}

// noEvals refuses to create or run evaluations, in ADK's error shape.
func (h *Handler) noEvals(c *gin.Context) *httpError {
	if _, aerr := h.app(c); aerr != nil {
		return aerr
	}
	return detail(http.StatusNotImplemented, noEvals)
}

// buildGraph serves ADK's app info (build_graph): the root agent as agentengine knows
// it, by name and description. Its tools and sub-agents are not known outside the
// runner, so the UI shows the agent alone.
func (h *Handler) buildGraph(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	desc := ""
	for _, a := range h.rt.Agents() {
		if a.Name == app {
			desc = a.Description
		}
	}
	httpx.WriteJSON(c, http.StatusOK, gin.H{"name": app, "root_agent": gin.H{"name": app, "description": desc}})
	return nil
}

// buildGraphImage serves build_graph_image: no graphs ({} in google-adk 2.x's shape of
// one DOT source per sub-workflow; {"dotSrc": ""} in 1.x's), which the UI shows as "not
// available". dark_mode must be a boolean, as FastAPI checks it.
func (h *Handler) buildGraphImage(perPath bool) func(*gin.Context) *httpError {
	return func(c *gin.Context) *httpError {
		if _, aerr := h.app(c); aerr != nil {
			return aerr
		}
		if v, ok := c.GetQuery("dark_mode"); ok {
			switch v {
			case "true", "false", "1", "0", "True", "False", "yes", "no", "on", "off":
			default:
				return invalid("bool_parsing", []any{"query", "dark_mode"}, "Input should be a valid boolean, unable to interpret input")
			}
		}
		if perPath {
			httpx.WriteJSON(c, http.StatusOK, map[string]any{})
			return nil
		}
		httpx.WriteJSON(c, http.StatusOK, gin.H{"dotSrc": ""})
		return nil
	}
}

// builder serves the builder's read route: ADK answers "" when the app has no YAML
// agent config, which a code-defined agent (every agentengine project) does not.
func (h *Handler) builder(c *gin.Context) *httpError {
	if _, aerr := h.app(c); aerr != nil {
		return aerr
	}
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "text/plain; charset=utf-8", nil)
	return nil
}

// runLive answers the UI's live (audio/video) WebSocket by closing it with the reason,
// which ADK's UI shows; a plain GET gets ADK's error shape.
func (h *Handler) runLive(c *gin.Context) {
	if c.GetHeader("Upgrade") == "" {
		writeError(c, detail(http.StatusBadRequest, noLive))
		return
	}
	ws, err := websocket.Accept(c.Writer, c.Request, nil)
	if err != nil {
		h.log.Debug("run_live upgrade", "error", err)
		return // Accept wrote the response
	}
	_ = ws.Close(websocket.StatusUnsupportedData, noLive)
}
