package adkweb

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/session"
)

// Traces are the recent traces ADK's debug routes answer from.
type Traces interface {
	// Session returns the spans of the session's traces; Run those of a run's trace.
	Session(id string) []tracing.Span
	Run(id string) []tracing.Span
}

// registerTraces mounts the debug trace routes the ADK dev UI's Trace tab calls, under
// the 2.x /dev/apps/{app} prefix and at the paths older releases used.
func (h *Handler) registerTraces(r gin.IRouter) {
	for _, prefix := range []string{"", "/dev/apps/:app"} {
		r.GET(prefix+"/debug/trace/session/:session", handle(h.sessionTrace))
		r.GET(prefix+"/debug/trace/:event", handle(h.eventTrace))
	}
}

// ownsTrace reports the debug trace paths (Owns).
func ownsTrace(path string) bool {
	if rest, ok := strings.CutPrefix(path, "/dev/apps/"); ok {
		_, after, found := strings.Cut(rest, "/")
		return found && strings.HasPrefix(after, "debug/trace/")
	}
	return strings.HasPrefix(path, "/debug/trace/")
}

// attrADKInvocation is the attribute ADK's spans name their invocation with.
const attrADKInvocation = "gcp.vertex.agent.invocation_id"

// webUISpan is a span as ADK's dev server lists it (WebUiSpan): times in nanoseconds
// since the epoch, ids as integers.
type webUISpan struct {
	Name         string            `json:"name"`
	StartTime    int64             `json:"start_time"`
	EndTime      int64             `json:"end_time"`
	TraceID      json.Number       `json:"trace_id"`
	SpanID       json.Number       `json:"span_id"`
	ParentSpanID *json.Number      `json:"parent_span_id"`
	Attributes   map[string]any    `json:"attributes"`
	Logs         []json.RawMessage `json:"logs"`
}

// sessionTrace serves GET .../debug/trace/session/{id}: the spans of the session's
// recent turns, [] when there are none (as ADK answers).
func (h *Handler) sessionTrace(c *gin.Context) *httpError {
	spans := []tracing.Span(nil)
	if h.traces != nil {
		spans = h.traces.Session(c.Param("session"))
	}
	if !h.mayRead(c, spans) {
		spans = nil
	}
	out := make([]webUISpan, 0, len(spans))
	for _, sp := range spans {
		out = append(out, toWebUI(sp))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// eventTrace serves GET .../debug/trace/{event_id}: the attributes of the turn span of
// the event's run, with its trace and span ids (ADK answers those of the model call
// that produced the event).
func (h *Handler) eventTrace(c *gin.Context) *httpError {
	event := c.Param("event")
	if h.traces != nil {
		// An event id is its run's invocation id followed by "-<seq>" (and "-<k>" for a
		// stored event's k-th ADK event, "-p<index>" for a partial one).
		for inv := event; inv != ""; {
			i := strings.LastIndexByte(inv, '-')
			if i <= 0 {
				break
			}
			inv = inv[:i]
			spans := h.traces.Run(inv)
			if len(spans) == 0 || !h.mayRead(c, spans) {
				continue
			}
			for _, sp := range spans {
				if v, ok := sp.Attr(tracing.AttrRunID); ok && v.AsString() == inv {
					attrs := attributes(sp.Attributes)
					attrs["gcp.vertex.agent.event_id"] = event
					attrs["trace_id"] = decimal(sp.TraceID[:])
					attrs["span_id"] = decimal(sp.SpanID[:])
					c.JSON(http.StatusOK, attrs)
					return nil
				}
			}
		}
	}
	return detail(http.StatusNotFound, "Trace not found")
}

// mayRead reports whether the caller may see the spans: a caller bound to a user only
// those of that user's sessions (the turn span names the agent and the session).
func (h *Handler) mayRead(c *gin.Context, spans []tracing.Span) bool {
	id := caller.From(c.Request.Context())
	if !id.Bound {
		return true
	}
	for _, sp := range spans {
		agent, ok1 := sp.Attr(string(semconv.GenAIAgentNameKey))
		sid, ok2 := sp.Attr(string(semconv.GenAIConversationIDKey))
		if !ok1 || !ok2 {
			continue
		}
		if _, err := h.rt.Session(c.Request.Context(), session.Key{App: agent.AsString(), User: id.User, ID: sid.AsString()}); err != nil {
			return false
		}
	}
	return len(spans) > 0
}

func toWebUI(sp tracing.Span) webUISpan {
	w := webUISpan{
		Name: sp.Name, StartTime: sp.Start.UnixNano(), EndTime: sp.End.UnixNano(),
		TraceID: decimal(sp.TraceID[:]), SpanID: decimal(sp.SpanID[:]),
		Attributes: attributes(sp.Attributes), Logs: []json.RawMessage{},
	}
	if sp.ParentID.IsValid() {
		p := decimal(sp.ParentID[:])
		w.ParentSpanID = &p
	}
	// The dev UI files a trace under the invocation named by ADK's own attribute (else
	// under the trace id, which matches no invocation of the session's events): the turn
	// span names its run, which is the invocation id of the run's ADK events.
	if run, ok := w.Attributes[tracing.AttrRunID]; ok {
		if _, has := w.Attributes[attrADKInvocation]; !has {
			w.Attributes[attrADKInvocation] = run
		}
	}
	return w
}

// decimal is an id as the integer ADK's Python writes (OpenTelemetry's int ids).
func decimal(id []byte) json.Number {
	return json.Number(new(big.Int).SetBytes(id).String())
}

func attributes(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
