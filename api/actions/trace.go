package actions

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/session"
)

// Traces are the recent traces GetRunTrace answers from (tracing.Recent).
type Traces interface {
	// Run returns the spans of the traces whose turn span names the run.
	Run(id string) []tracing.Span
}

type runTraceRequest struct {
	sessionRequest
	InvocationID string `json:"InvocationId"`
	// RunID is InvocationId's other name (the run id of the other surfaces).
	RunID string `json:"RunId"`
}

type runTraceData struct {
	SessionID    string   `json:"SessionId"`
	InvocationID string   `json:"InvocationId"`
	TraceIDs     []string `json:"TraceIds"`
	// StartTime is the first span's start; each span's OffsetMs counts from it.
	StartTime  string        `json:"StartTime"`
	DurationMs float64       `json:"DurationMs"`
	Spans      []spanPayload `json:"Spans"`
}

type spanPayload struct {
	TraceID      string         `json:"TraceId"`
	SpanID       string         `json:"SpanId"`
	ParentSpanID string         `json:"ParentSpanId"` // "" for a root
	Name         string         `json:"Name"`
	Kind         string         `json:"Kind"`
	StartTime    string         `json:"StartTime"`
	OffsetMs     float64        `json:"OffsetMs"`
	DurationMs   float64        `json:"DurationMs"`
	Status       string         `json:"Status"` // ok or error
	Error        string         `json:"Error,omitempty"`
	Attributes   map[string]any `json:"Attributes"`
}

// maxRunEvents bounds the events of a run read to match its traces.
const maxRunEvents = 2000

// getRunTrace serves GetRunTrace: the spans of a run's traces that the server still
// keeps (the turn, its store writes, the runner call, its tool calls, and the HTTP
// request it came with), by start time. The run must be one of the caller's session:
// its stored events name it, and the trace's turn span names the session and agent and
// was open when one of those events was written (ids are client-chosen, so another
// user's run with the same session and run ids is told apart by its times; spans do
// not record the user unless configured to).
func (s *Surface) getRunTrace(ctx context.Context, c *gin.Context, req *runTraceRequest) (any, *actionError) {
	inv, field := req.InvocationID, "InvocationId"
	if inv == "" {
		inv, field = req.RunID, "RunId"
	}
	if inv == "" {
		return nil, missing("InvocationId")
	}
	if e := checkID(field, inv); e != nil {
		return nil, e
	}
	if req.InvocationID != "" && req.RunID != "" && req.InvocationID != req.RunID {
		return nil, invalid("InvocationId and RunId name different runs; send one")
	}
	key, _, e := s.callerSession(ctx, c, "GetRunTrace", req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	if s.cfg.Traces == nil {
		return nil, &actionError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "tracing is off on this server (it was started with --no-trace), so no traces are kept"}
	}
	evs, err := s.rt.Events(ctx, key, session.EventQuery{InvocationID: inv, Limit: maxRunEvents})
	if err != nil {
		return nil, s.fromHost("GetRunTrace", err)
	}
	if len(evs) == 0 {
		return nil, notFound("run %q not found in session %q", inv, key.ID)
	}
	times := make([]time.Time, len(evs))
	for i := range evs {
		times[i] = evs[i].Time
	}
	spans := ownSpans(s.cfg.Traces.Run(inv), key, inv, times)
	if len(spans) == 0 {
		return nil, notFound("no trace of run %q is kept: the server keeps its recent traces only", inv)
	}
	return tracePayload(key.ID, inv, spans), nil
}

// ownSpans keeps the traces whose turn span is the run's in the session of key and
// was open when one of the run's events (times) was stored.
func ownSpans(spans []tracing.Span, key session.Key, inv string, times []time.Time) []tracing.Span {
	mine := map[trace.TraceID]bool{}
	for _, sp := range spans {
		if !attrIs(sp, tracing.AttrRunID, inv) || !attrIs(sp, string(semconv.GenAIConversationIDKey), key.ID) ||
			!attrIs(sp, string(semconv.GenAIAgentNameKey), key.App) {
			continue
		}
		for _, t := range times {
			if !t.Before(sp.Start) && !t.After(sp.End) {
				mine[sp.TraceID] = true
				break
			}
		}
	}
	out := spans[:0:0]
	for _, sp := range spans {
		if mine[sp.TraceID] {
			out = append(out, sp)
		}
	}
	return out
}

func attrIs(sp tracing.Span, key, want string) bool {
	v, ok := sp.Attr(key)
	return ok && v.Type() == attribute.STRING && v.AsString() == want
}

func tracePayload(sessionID, inv string, spans []tracing.Span) runTraceData {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	start, end := spans[0].Start, spans[0].End
	var ids []string
	seen := map[trace.TraceID]bool{}
	for _, sp := range spans {
		if sp.End.After(end) {
			end = sp.End
		}
		if !seen[sp.TraceID] {
			seen[sp.TraceID] = true
			ids = append(ids, sp.TraceID.String())
		}
	}
	out := runTraceData{SessionID: sessionID, InvocationID: inv, TraceIDs: ids, StartTime: start.UTC().Format(time.RFC3339Nano),
		DurationMs: ms(end.Sub(start)), Spans: make([]spanPayload, 0, len(spans))}
	for _, sp := range spans {
		p := spanPayload{TraceID: sp.TraceID.String(), SpanID: sp.SpanID.String(), Name: sp.Name, Kind: sp.Kind.String(),
			StartTime: sp.Start.UTC().Format(time.RFC3339Nano), OffsetMs: ms(sp.Start.Sub(start)), DurationMs: ms(sp.End.Sub(sp.Start)),
			Status: "ok", Attributes: make(map[string]any, len(sp.Attributes))}
		if sp.ParentID.IsValid() {
			p.ParentSpanID = sp.ParentID.String()
		}
		if sp.Failed {
			p.Status, p.Error = "error", sp.Error
		}
		for _, kv := range sp.Attributes {
			p.Attributes[string(kv.Key)] = kv.Value.AsInterface()
		}
		out.Spans = append(out.Spans, p)
	}
	return out
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
