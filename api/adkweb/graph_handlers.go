package adkweb

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// ADK's agent graph as its dev server draws it, with the calls of one event highlighted:
// the base graph of google-adk 2.x's UI (which highlights events itself) and the event
// graph of the earlier UI. The runner's google-adk draws it (the adk.graph call of the
// ADK bridge); agents of other frameworks have none, answered as ADK answers an event it
// draws no graph for: {}.

// graphCall is the ADK bridge's adk.graph argument.
type graphCall struct {
	Highlights [][2]*string `json:"highlights"`
	DarkMode   bool         `json:"dark_mode"`
}

// drawGraph answers the agent's graph with pairs highlighted: {"dotSrc": …} or {}.
func (h *Handler) drawGraph(c *gin.Context, app string, call graphCall) *httpError {
	if info, err := h.rt.ResolveAgent(app); err != nil || info.Framework != "adk" {
		httpx.WriteJSON(c, http.StatusOK, map[string]any{})
		return nil
	}
	if call.Highlights == nil {
		call.Highlights = [][2]*string{}
	}
	arg, err := json.Marshal(call)
	if err != nil {
		return fromHostError(h.log, "agent graph", err)
	}
	out, err := h.rt.AgentCall(c.Request.Context(), app, "adk.graph", arg)
	if err != nil {
		return fromHostError(h.log, "agent graph", err)
	}
	var drawn struct {
		DotSrc string `json:"dotSrc"`
	}
	if json.Unmarshal(out, &drawn) != nil || drawn.DotSrc == "" {
		httpx.WriteJSON(c, http.StatusOK, map[string]any{})
		return nil
	}
	httpx.WriteJSON(c, http.StatusOK, drawn)
	return nil
}

// baseGraph serves GET /dev/apps/{app}/graph?dark_mode=: the graph without highlights.
func (h *Handler) baseGraph(c *gin.Context) *httpError {
	app, aerr := h.app(c)
	if aerr != nil {
		return aerr
	}
	dark, aerr := boolQuery(c, "dark_mode")
	if aerr != nil {
		return aerr
	}
	return h.drawGraph(c, app, graphCall{DarkMode: dark})
}

// eventGraph serves GET .../sessions/{session}/events/{event}/graph: the graph with the
// event's calls highlighted as ADK's dev server highlights them: the author and each tool
// it called, else each tool that answered and the author, else the author alone. An
// event (or session) that does not exist gets {}, as from ADK.
func (h *Handler) eventGraph(c *gin.Context) *httpError {
	key, aerr := h.sessionKey(c)
	if aerr != nil {
		return aerr
	}
	ev, aerr := h.findEvent(c, key, c.Param("event"))
	if aerr != nil || ev == nil {
		if aerr == nil {
			httpx.WriteJSON(c, http.StatusOK, map[string]any{})
		}
		return aerr
	}
	return h.drawGraph(c, key.App, graphCall{Highlights: highlights(ev)})
}

// findEvent returns the session's event with ADK id id as ADK serves it (nil: none).
func (h *Handler) findEvent(c *gin.Context, key session.Key, id string) (*Event, *httpError) {
	ctx := c.Request.Context()
	sess, err := h.rt.Session(ctx, key)
	if errors.Is(err, host.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, h.sessionError("load session", key, err)
	}
	evs, err := h.rt.Events(ctx, key, session.EventQuery{})
	if err != nil {
		return nil, h.sessionError("session events", key, err)
	}
	for _, e := range sessionJSON(sess, session.State{}, evs).Events {
		if e.ID == id {
			return &e, nil
		}
	}
	return nil, nil
}

// highlights are the (from, to) pairs ADK's dev server highlights for an event.
func highlights(e *Event) [][2]*string {
	author := e.Author
	var calls, answers [][2]*string
	if e.Content != nil {
		for _, p := range e.Content.Parts {
			if fc := p.FunctionCall; fc != nil {
				calls = append(calls, [2]*string{&author, &fc.Name})
			}
			if fr := p.FunctionResponse; fr != nil {
				answers = append(answers, [2]*string{&fr.Name, &author})
			}
		}
	}
	switch {
	case len(calls) > 0:
		return calls
	case len(answers) > 0:
		return answers
	}
	none := ""
	return [][2]*string{{&author, &none}}
}

// earlierGraphImage serves /dev/build_graph_image/{app}, the path the dev UI bundled
// with google-adk 1.x calls (1.x's own server has no such route). That UI reads the
// answer two ways: as {"dotSrc"} (the agent structure view, ?node= for a sub-agent) and
// as one {"dotSrc"} per workflow path (the session's graphs, from which it draws the
// selected event's), so it gets both: the DOT source of the node (the root without
// ?node=) beside the per-path map of 2.x's route. dark_mode is checked as FastAPI does.
func (h *Handler) earlierGraphImage(c *gin.Context) *httpError {
	graphs, node, aerr := h.nodeGraphs(c)
	if aerr != nil {
		return aerr
	}
	out := map[string]any{"dotSrc": graphs[node]["dotSrc"]}
	for path, g := range graphs {
		out[path] = g
	}
	httpx.WriteJSON(c, http.StatusOK, out)
	return nil
}
