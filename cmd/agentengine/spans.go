package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// webSpan is a span as the server's debug trace routes list it (ADK's WebUiSpan shape).
type webSpan struct {
	Name         string         `json:"name"`
	StartTime    int64          `json:"start_time"`
	EndTime      int64          `json:"end_time"`
	TraceID      json.Number    `json:"trace_id"`
	SpanID       json.Number    `json:"span_id"`
	ParentSpanID *json.Number   `json:"parent_span_id"`
	Attributes   map[string]any `json:"attributes"`
}

// fetchSpans reads a session's recent spans from a running server.
func fetchSpans(ctx context.Context, server, token, sessionID string) ([]webSpan, error) {
	u := strings.TrimRight(server, "/") + "/debug/trace/session/" + url.PathEscape(sessionID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("--spans-from %q: %w", server, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the spans from %s: %w", server, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("read the spans from %s: %s: %s", server, resp.Status, strings.TrimSpace(string(b)))
	}
	var spans []webSpan
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&spans); err != nil {
		return nil, fmt.Errorf("read the spans from %s: %w", server, err)
	}
	return spans, nil
}

// printSpanTrees prints each trace as a tree of spans with their durations and the
// attributes a reader looks for (model, tokens, tool, status).
func printSpanTrees(out io.Writer, spans []webSpan) {
	if len(spans) == 0 {
		fmt.Fprintln(out, "no spans: the server keeps only its recent traces, and none of them is of this session")
		return
	}
	ids := map[string]bool{}
	children := map[string][]webSpan{}
	for _, s := range spans {
		ids[s.SpanID.String()] = true
	}
	var traces []string
	roots := map[string][]webSpan{}
	for _, s := range spans {
		if s.ParentSpanID != nil && ids[s.ParentSpanID.String()] {
			children[s.ParentSpanID.String()] = append(children[s.ParentSpanID.String()], s)
			continue
		}
		t := s.TraceID.String()
		if _, ok := roots[t]; !ok {
			traces = append(traces, t)
		}
		roots[t] = append(roots[t], s)
	}
	byStart := func(l []webSpan) {
		sort.SliceStable(l, func(i, j int) bool { return l[i].StartTime < l[j].StartTime })
	}
	var walk func(s webSpan, depth int)
	walk = func(s webSpan, depth int) {
		fmt.Fprintf(out, "%s%s  %s%s\n", strings.Repeat("  ", depth+1), s.Name,
			time.Duration(s.EndTime-s.StartTime).Round(10*time.Microsecond), spanNotes(s.Attributes))
		kids := children[s.SpanID.String()]
		byStart(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, t := range traces {
		fmt.Fprintf(out, "trace %s\n", hexID(t, 32))
		byStart(roots[t])
		for _, r := range roots[t] {
			walk(r, 0)
		}
	}
}

// spanNotes are the attributes worth a glance, in a fixed order.
func spanNotes(a map[string]any) string {
	var notes []string
	for _, k := range []struct{ key, label string }{
		{"agentengine.run.id", "run"}, {"agentengine.run.status", "status"}, {"http.response.status_code", "http"},
		{"gen_ai.request.model", "model"}, {"gen_ai.usage.input_tokens", "in"}, {"gen_ai.usage.output_tokens", "out"},
		{"gen_ai.tool.name", "tool"}, {"gen_ai.tool.call.id", "call"}, {"error.type", "error"},
	} {
		if v, ok := a[k.key]; ok {
			notes = append(notes, fmt.Sprintf("%s=%v", k.label, v))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "  " + strings.Join(notes, " ")
}

// hexID is a decimal id (as the routes write them) in the usual hex form.
func hexID(dec string, digits int) string {
	n, ok := new(big.Int).SetString(dec, 10)
	if !ok {
		return dec
	}
	return fmt.Sprintf("%0*x", digits, n)
}
