package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// assistant is LangGraph's Assistant: one per hosted agent, its id and graph id the
// agent's name. Assistants are the server's configuration: they cannot be created,
// changed or versioned through the API.
type assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	CreatedAt   string         `json:"created_at"`
	UpdatedAt   string         `json:"updated_at"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
}

// epoch is the creation time reported for every assistant: they exist as long as the
// server's configuration does, and a fixed time keeps the answers stable.
var epoch = time.Unix(0, 0).UTC()

// agents lists the hosted agents served as assistants.
func (h *Handler) agents() []host.AgentInfo {
	var out []host.AgentInfo
	for _, a := range h.rt.Agents() {
		if h.frameworks[a.Framework] {
			out = append(out, a)
		}
	}
	return out
}

// agent returns the assistant id's agent.
func (h *Handler) agent(id string) (host.AgentInfo, bool) {
	for _, a := range h.agents() {
		if a.Name == id {
			return a, true
		}
	}
	return host.AgentInfo{}, false
}

func toAssistant(a host.AgentInfo) assistant {
	ts := stamp(epoch)
	var desc *string
	if a.Description != "" {
		d := a.Description
		desc = &d
	}
	return assistant{AssistantID: a.Name, GraphID: a.Name, Config: map[string]any{}, Context: map[string]any{},
		CreatedAt: ts, UpdatedAt: ts, Metadata: map[string]any{"created_by": "system", "framework": a.Framework},
		Version: 1, Name: a.Name, Description: desc}
}

type assistantQuery struct {
	Metadata  map[string]any `json:"metadata"`
	GraphID   string         `json:"graph_id"`
	Name      string         `json:"name"`
	Limit     *int           `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
}

func (h *Handler) matchAssistants(q assistantQuery) []assistant {
	var out []assistant
	for _, a := range h.agents() {
		as := toAssistant(a)
		if q.GraphID != "" && q.GraphID != as.GraphID {
			continue
		}
		if q.Name != "" && !strings.Contains(strings.ToLower(as.Name), strings.ToLower(q.Name)) {
			continue
		}
		if !metadataMatches(as.Metadata, q.Metadata) {
			continue
		}
		out = append(out, as)
	}
	if strings.EqualFold(q.SortOrder, "desc") {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// searchAssistants serves POST /assistants/search.
func (h *Handler) searchAssistants(c *gin.Context) *apiError {
	var q assistantQuery
	if e := h.bind(c, &q); e != nil {
		return e
	}
	limit, e := searchLimit(q.Limit, q.Offset)
	if e != nil {
		return e
	}
	all := h.matchAssistants(q)
	writePage(c, all, q.Offset, limit)
	return nil
}

// countAssistants serves POST /assistants/count.
func (h *Handler) countAssistants(c *gin.Context) *apiError {
	var q assistantQuery
	if e := h.bind(c, &q); e != nil {
		return e
	}
	httpx.WriteJSON(c, http.StatusOK, len(h.matchAssistants(q)))
	return nil
}

func (h *Handler) getAssistant(c *gin.Context) *apiError {
	a, ok := h.agent(c.Param("aid"))
	if !ok {
		return assistantNotFound(c.Param("aid"))
	}
	httpx.WriteJSON(c, http.StatusOK, toAssistant(a))
	return nil
}

// introspect asks the assistant's runner about its loaded graph (a langgraph.* call of
// the LangGraph bridge, answered as LangGraph's server computes it) and returns the
// assistant and the answer. A runner or graph that cannot describe it is LangGraph's 422.
func (h *Handler) introspect(c *gin.Context, method string, arg any) (host.AgentInfo, json.RawMessage, *apiError) {
	a, ok := h.agent(c.Param("aid"))
	if !ok {
		return a, nil, assistantNotFound(c.Param("aid"))
	}
	raw, err := json.Marshal(arg)
	if err != nil {
		return a, nil, fromHost(h.log, method, err)
	}
	out, err := h.rt.AgentCall(c.Request.Context(), a.Name, method, raw)
	var ce *host.ClientError
	switch {
	case errors.As(err, &ce) && errors.Is(ce.Kind, host.ErrInvalidInput):
		return a, nil, detail(http.StatusUnprocessableEntity, "%s", ce.Message)
	case err != nil:
		return a, nil, fromHost(h.log, method, err)
	}
	return a, out, nil
}

// relayIntrospection writes the runner's answer to a langgraph.* call as it is.
func (h *Handler) relayIntrospection(c *gin.Context, method string, arg any) *apiError {
	_, out, e := h.introspect(c, method, arg)
	if e != nil {
		return e
	}
	c.Data(http.StatusOK, "application/json", out)
	return nil
}

// assistantGraph serves GET /assistants/{id}/graph?xray=: the graph's nodes and edges
// (xray: true, false or a depth of subgraphs to draw inside).
func (h *Handler) assistantGraph(c *gin.Context) *apiError {
	var xray any = false
	switch q := c.Query("xray"); q {
	case "", "false", "False":
	case "true", "True":
		xray = true
	default:
		n, err := strconv.Atoi(q)
		if err != nil || n <= 0 {
			return invalid("Invalid xray value")
		}
		xray = n
	}
	return h.relayIntrospection(c, "langgraph.graph", map[string]any{"xray": xray})
}

// assistantSchemas serves GET /assistants/{id}/schemas: the compiled graph's input,
// output, state, config and context JSON schemas.
func (h *Handler) assistantSchemas(c *gin.Context) *apiError {
	schemas := map[string]json.RawMessage{}
	for _, k := range []string{"input_schema", "output_schema", "state_schema", "config_schema", "context_schema"} {
		schemas[k] = json.RawMessage("null") // unknown, for a runner that cannot tell
	}
	a, raw, e := h.introspect(c, "langgraph.schemas", map[string]any{})
	switch {
	case e != nil && e.Status == http.StatusUnprocessableEntity: // the schemas stay unknown
	case e != nil:
		return e
	default:
		if err := json.Unmarshal(raw, &schemas); err != nil {
			return fromHost(h.log, "langgraph.schemas", err)
		}
	}
	schemas["graph_id"], _ = json.Marshal(a.Name)
	httpx.WriteJSON(c, http.StatusOK, schemas)
	return nil
}

// assistantSubgraphs serves GET /assistants/{id}/subgraphs[/{namespace}]?recurse=: the
// schemas of the graph's subgraphs by namespace.
func (h *Handler) assistantSubgraphs(c *gin.Context) *apiError {
	arg := map[string]any{"namespace": nil, "recurse": c.Query("recurse") == "true" || c.Query("recurse") == "True"}
	if ns := c.Param("ns"); ns != "" {
		arg["namespace"] = ns
	}
	return h.relayIntrospection(c, "langgraph.subgraphs", arg)
}

// bind decodes a JSON body into v; an empty body leaves v as it is.
func (h *Handler) bind(c *gin.Context, v any) *apiError {
	b, be := httpx.ReadJSON(c, h.maxBody)
	if be != nil {
		return &apiError{Status: be.Status, Detail: be.Message, Err: be.Err}
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return invalid("the request body is not valid: %v", err)
	}
	return nil
}

// pageLimit is a search's limit: 10 by default, 1 to 1000.
func pageLimit(l *int) (int, *apiError) {
	if l == nil {
		return 10, nil
	}
	if *l < 1 || *l > 1000 {
		return 0, invalid("limit must be between 1 and 1000")
	}
	return *l, nil
}

// searchLimit checks a search's limit (10 when unset) and offset.
func searchLimit(l *int, offset int) (int, *apiError) {
	limit, e := pageLimit(l)
	if e != nil {
		return 0, e
	}
	if offset < 0 {
		return 0, invalid("offset must not be negative")
	}
	return limit, nil
}

// writePage writes the window of a search's matches, with X-Pagination-Next when more follow.
func writePage[T any](c *gin.Context, all []T, offset, limit int) {
	page := window(all, offset, limit)
	if offset+len(page) < len(all) {
		c.Header("X-Pagination-Next", strconv.Itoa(offset+len(page)))
	}
	httpx.WriteJSON(c, http.StatusOK, page)
}

func window[T any](all []T, offset, limit int) []T {
	if offset >= len(all) {
		return []T{}
	}
	end := min(len(all), offset+limit)
	return all[offset:end]
}

// metadataMatches reports whether have holds every key of want with an equal value.
func metadataMatches(have, want map[string]any) bool {
	for k, w := range want {
		v, ok := have[k]
		if !ok {
			return false
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(w)
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }
