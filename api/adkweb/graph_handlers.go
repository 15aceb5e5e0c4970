package adkweb

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// eventGraph serves an event's graph: google-adk 1.x's dev UI draws the agent graph of
// the selected event from it. ADK highlights the event's call in it; the runner computes
// graphs once, when it describes the agent, so this is the root agent's graph without
// highlights (dark, ADK's default here), or {} (no graph) when the runner drew none.
func (h *Handler) eventGraph(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	d, aerr := h.devInfoOf(c, app)
	if aerr != nil {
		return aerr
	}
	if d != nil {
		if dot := d.Graphs["dark"][""][""]["dotSrc"]; dot != "" {
			httpx.WriteJSON(c, http.StatusOK, gin.H{"dotSrc": dot})
			return nil
		}
	}
	httpx.WriteJSON(c, http.StatusOK, map[string]any{})
	return nil
}

// earlierGraphImage serves /dev/build_graph_image/{app}, the path the dev UI bundled
// with google-adk 1.x calls (1.x's own server has no such route). That UI reads the
// answer two ways: as {"dotSrc"} (the agent structure view, ?node= for a sub-agent) and
// as one {"dotSrc"} per workflow path (the session's graphs, from which it draws the
// selected event's), so it gets both: the DOT source of the node (the root without
// ?node=) beside the per-path map of 2.x's route. dark_mode is checked as FastAPI does.
func (h *Handler) earlierGraphImage(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	dark, aerr := boolQuery(c, "dark_mode")
	if aerr != nil {
		return aerr
	}
	mode := "light"
	if dark {
		mode = "dark"
	}
	d, aerr := h.devInfoOf(c, app)
	if aerr != nil {
		return aerr
	}
	out := map[string]any{"dotSrc": ""}
	if d != nil {
		node := c.Query("node")
		graphs, ok := d.Graphs[mode][node]
		if !ok && node != "" {
			return detail(http.StatusNotFound, "Node not found: %s", node)
		}
		for path, g := range graphs {
			out[path] = g
		}
		out["dotSrc"] = graphs[node]["dotSrc"]
	}
	httpx.WriteJSON(c, http.StatusOK, out)
	return nil
}
