package adkweb

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// The dev routes ADK's dev UI calls besides sessions and runs, at google-adk 2.x's
// paths (/dev/apps/{app}/...) and the earlier ones. What agentengine does not offer
// (live audio and video) is answered in the
// shape the UI expects for "nothing there" or with an error it shows, never with a 404
// it would throw on.

// Messages of the features not offered, shown by the UI or returned to API clients.
const (
	noLive      = "agentengine does not serve live audio/video (run_live); use text chat"
	noTelemetry = "agentengine sends no telemetry: there is no consent to record"
	noDeploy    = "agentengine does not deploy agents from the dev UI"
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
		h.registerEvals(g)
	}
	r.GET("/dev/apps/:app/build_graph", handle(h.buildGraph))
	r.GET("/dev/build_graph/:app", handle(h.buildGraph))
	r.GET("/dev/apps/:app/build_graph_image", handle(h.buildGraphImage))
	r.GET("/dev/build_graph_image/:app", handle(h.earlierGraphImage))
	h.registerBuilder(r)
	r.GET("/dev/apps/:app/users/:user/sessions/:session/events/:event/graph", handle(h.eventGraph))
	r.GET("/apps/:app/users/:user/sessions/:session/events/:event/graph", handle(h.eventGraph))
	r.GET("/dev/apps/:app/graph", handle(h.baseGraph))
	// ADK's agent tests (JSON files under the agent's tests/) are not run.
	r.GET("/dev/apps/:app/tests", handle(h.list(false)))
	r.GET("/dev/apps/:app/deploy/*what", handle(h.noDeploy))
	r.POST("/dev/apps/:app/deploy/*what", handle(h.noDeploy))
}

// noDeploy refuses the UI's deploy form.
func (h *Handler) noDeploy(c *gin.Context) *httpError {
	if _, aerr := h.app(c); aerr != nil {
		return aerr
	}
	return detail(http.StatusNotImplemented, noDeploy)
}

// devOwns reports the dev routes' paths (Owns).
func devOwns(path string) bool {
	switch path {
	case "/config/telemetry", "/run_live":
		return true
	}
	return strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/builder/app/") || path == "/builder/save"
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

// devInfo is what the ADK bridge reports of the loaded agent for the dev UI
// (host.Runtime.AgentNative): ADK's app info and, per node and mode, the DOT graphs
// of its workflows, all computed by the installed google-adk.
type devInfo struct {
	AppInfo json.RawMessage                                    `json:"app_info"`
	Graphs  map[string]map[string]map[string]map[string]string `json:"graphs"`
}

// devInfoOf reads the agent's dev info (nil when its runner reports none: another
// framework, or a google-adk without the helpers).
func (h *Handler) devInfoOf(c *gin.Context, app string) (*devInfo, *httpError) {
	raw, err := h.rt.AgentNative(c.Request.Context(), app)
	if err != nil {
		return nil, fromHostError(h.log, "describe agent", err)
	}
	var d devInfo
	if raw == nil || json.Unmarshal(raw, &d) != nil || len(d.AppInfo) == 0 {
		return nil, nil
	}
	return &d, nil
}

// buildGraph serves ADK's app info (build_graph) as the ADK bridge computed it; for
// agents whose runner reports none, the root agent by name and description.
func (h *Handler) buildGraph(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	d, aerr := h.devInfoOf(c, app)
	if aerr != nil {
		return aerr
	}
	if d != nil {
		c.Data(http.StatusOK, "application/json", d.AppInfo)
		return nil
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

// buildGraphImage serves build_graph_image: google-adk 2.x's shape, one DOT source
// per workflow path under ?node= (the root without it). Agents without graphs get {},
// which the UI shows as "not available".
func (h *Handler) buildGraphImage(c *gin.Context) *httpError {
	graphs, _, aerr := h.nodeGraphs(c)
	if aerr != nil {
		return aerr
	}
	if graphs == nil {
		graphs = map[string]map[string]string{}
	}
	httpx.WriteJSON(c, http.StatusOK, graphs)
	return nil
}

// nodeGraphs reads a graph route's app, ?dark_mode= (a boolean, as FastAPI checks it)
// and ?node= and returns the node's DOT graphs per workflow path as the runner drew
// them (nil: it drew none; an unknown node is ADK's 404).
func (h *Handler) nodeGraphs(c *gin.Context) (graphs map[string]map[string]string, node string, aerr *httpError) {
	app, aerr := h.app(c)
	if aerr != nil {
		return nil, "", aerr
	}
	dark, aerr := boolQuery(c, "dark_mode")
	if aerr != nil {
		return nil, "", aerr
	}
	mode := "light"
	if dark {
		mode = "dark"
	}
	d, aerr := h.devInfoOf(c, app)
	if aerr != nil || d == nil {
		return nil, "", aerr
	}
	node = c.Query("node")
	graphs, ok := d.Graphs[mode][node]
	if !ok && node != "" {
		return nil, "", detail(http.StatusNotFound, "Node not found: %s", node)
	}
	return graphs, node, nil
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
