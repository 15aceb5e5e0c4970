package load

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Result is what one run measured. Times are in milliseconds unless named otherwise.
type Result struct {
	Label       string   `json:"label,omitempty"`
	Scenario    Scenario `json:"scenario"`
	URL         string   `json:"url"`
	Model       string   `json:"model"`
	Concurrency int      `json:"concurrency"`
	Deltas      int      `json:"deltas,omitempty"`
	DelayMS     int      `json:"delay_ms,omitempty"`
	// Requests were attempted in the measured phase; OK + Errors == Requests.
	Requests     int      `json:"requests"`
	OK           int      `json:"ok"`
	Errors       int      `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	Seconds      float64  `json:"seconds"`
	TurnsPerSec  float64  `json:"turns_per_sec"`
	// Latency is request sent → response complete, over successful requests.
	Latency *Percentiles `json:"latency_ms,omitempty"`
	// TTFB is request sent → first line of the body (streams only).
	TTFB *Percentiles `json:"ttfb_ms,omitempty"`
	// FirstDelta is request sent → first "*.delta" event (streams only).
	FirstDelta *Percentiles `json:"first_delta_ms,omitempty"`
	// DeltasPerTurn counts response.output_text.delta events per successful stream.
	DeltasPerTurn float64 `json:"deltas_per_turn,omitempty"`
	EventsPerTurn float64 `json:"events_per_turn,omitempty"`
	BytesPerTurn  float64 `json:"bytes_per_turn"`
	// ClientCPUPerTurnUS is the load generator's own CPU per turn (it shares the cores).
	ClientCPUPerTurnUS float64      `json:"client_cpu_per_turn_us"`
	Server             *ServerStats `json:"server,omitempty"`
	History            *HistoryInfo `json:"history,omitempty"`
	Streams            *StreamsInfo `json:"streams,omitempty"`
	Follow             *FollowInfo  `json:"follow,omitempty"`
	Started            time.Time    `json:"started"`
}

// Percentiles of a latency distribution, in milliseconds.
type Percentiles struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// ServerStats are readings of the server process over the measured phase.
type ServerStats struct {
	PID        int     `json:"pid"`
	CPUSeconds float64 `json:"cpu_s"`
	// CPUCores is CPU seconds per wall second (2.0 = both cores of a 2-core machine).
	CPUCores      float64 `json:"cpu_cores"`
	CPUPerTurnUS  float64 `json:"cpu_per_turn_us"`
	CPUPerDeltaUS float64 `json:"cpu_per_delta_us,omitempty"`
	RSSBeforeMB   float64 `json:"rss_before_mb"`
	RSSAfterMB    float64 `json:"rss_after_mb"`
	RSSPeakMB     float64 `json:"rss_peak_mb"`
	HWMMB         float64 `json:"hwm_mb"`
	// Children are the server's descendant processes (runners, a runner parent that
	// forks them) alive at the end.
	Children          int     `json:"children"`
	ChildCPUSeconds   float64 `json:"child_cpu_s"`
	ChildCPUPerTurnUS float64 `json:"child_cpu_per_turn_us"`
	// ChildRSSMB is the children's VmRSS at the end of the measured phase, summed.
	ChildRSSMB float64 `json:"child_rss_mb,omitempty"`
	// TreePSSMB is the proportional set size of the server and its descendants at the
	// end, summed: the memory they take together, pages they share counted once (VmRSS
	// counts a shared page in every process that maps it).
	TreePSSMB float64 `json:"tree_pss_mb,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// HistoryInfo describes the history scenario's conversations.
type HistoryInfo struct {
	// Events is the requested history per measured turn (at its start, at least).
	Events        int     `json:"events"`
	EventsPerTurn int     `json:"events_per_turn"`
	Conversations int     `json:"conversations"`
	SeedTurns     int     `json:"seed_turns"`
	SeedErrors    int     `json:"seed_errors"`
	SeedSeconds   float64 `json:"seed_seconds"`
	// MaxEvents is the most history any measured turn saw (seed + earlier measured turns).
	MaxEvents int `json:"max_events"`
}

// StreamsInfo describes the concurrent-streams scenario.
type StreamsInfo struct {
	Target    int `json:"target"`
	Completed int `json:"completed"`
	// MaxOpen is the most streams open (first event received, not yet finished) at once.
	MaxOpen int `json:"max_open"`
	// AllOpenMS is when all Target streams were open at once (0: never).
	AllOpenMS float64 `json:"all_open_ms"`
}

func percentiles(ds []time.Duration) *Percentiles {
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return ms(ds[min(max(i, 0), len(ds)-1)])
	}
	return &Percentiles{
		N: len(ds), Mean: ms(sum / time.Duration(len(ds))),
		P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(ds[len(ds)-1]),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WriteText writes a human-readable summary.
func (r *Result) WriteText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	label := r.Label
	if label != "" {
		label = " [" + label + "]"
	}
	p("%s%s  %s  model=%s  c=%d", r.Scenario, label, r.URL, r.Model, r.Concurrency)
	if r.Deltas > 0 {
		p("  deltas=%d", r.Deltas)
	}
	if r.DelayMS > 0 {
		p("  delay=%dms", r.DelayMS)
	}
	p("\n")
	if r.Scenario != Idle {
		p("  requests %d  ok %d  errors %d  in %.2fs  → %.1f turns/s\n", r.Requests, r.OK, r.Errors, r.Seconds, r.TurnsPerSec)
	}
	for _, e := range r.ErrorSamples {
		p("  error: %s\n", e)
	}
	pct := func(name string, x *Percentiles) {
		if x != nil {
			p("  %-12s p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  mean %.3f ms\n", name, x.P50, x.P90, x.P99, x.Max, x.Mean)
		}
	}
	pct("latency", r.Latency)
	pct("first byte", r.TTFB)
	pct("first delta", r.FirstDelta)
	if r.DeltasPerTurn > 0 {
		p("  %.1f text deltas, %.1f events, %.0f bytes per turn\n", r.DeltasPerTurn, r.EventsPerTurn, r.BytesPerTurn)
	} else if r.BytesPerTurn > 0 {
		p("  %.0f bytes per response\n", r.BytesPerTurn)
	}
	if h := r.History; h != nil {
		p("  history: %d events (%d per turn) on %d conversations, seeded by %d turns (%d errors) in %.1fs; most seen %d\n",
			h.Events, h.EventsPerTurn, h.Conversations, h.SeedTurns, h.SeedErrors, h.SeedSeconds, h.MaxEvents)
	}
	if s := r.Streams; s != nil {
		p("  streams: %d/%d completed, max %d open at once", s.Completed, s.Target, s.MaxOpen)
		if s.AllOpenMS > 0 {
			p(", all open after %.0f ms", s.AllOpenMS)
		}
		p("\n")
	}
	if f := r.Follow; f != nil {
		p("  followed on %s: %d text deltas missing, %d extra\n", f.FollowURL, f.Missing, f.Extra)
		pct("follow delta", f.Latency)
		pct("follow join", f.Join)
	}
	if s := r.Server; s != nil {
		if s.Error != "" {
			p("  server pid %d: %s\n", s.PID, s.Error)
		} else {
			p("  server pid %d: cpu %.2fs (%.2f cores)", s.PID, s.CPUSeconds, s.CPUCores)
			if s.CPUPerTurnUS > 0 {
				p(" = %.1f µs/turn", s.CPUPerTurnUS)
			}
			if s.CPUPerDeltaUS > 0 {
				p(", %.2f µs/delta", s.CPUPerDeltaUS)
			}
			p("; rss %.1f → %.1f MB (peak %.1f, hwm %.1f)\n", s.RSSBeforeMB, s.RSSAfterMB, s.RSSPeakMB, s.HWMMB)
			if s.Children > 0 {
				p("  runner children (%d): cpu %.2fs = %.1f µs/turn; rss %.1f MB\n", s.Children, s.ChildCPUSeconds, s.ChildCPUPerTurnUS, s.ChildRSSMB)
			}
			if s.TreePSSMB > 0 {
				p("  server + children pss %.1f MB\n", s.TreePSSMB)
			}
		}
	}
	if r.Scenario != Idle {
		p("  load generator cpu %.1f µs/turn\n", r.ClientCPUPerTurnUS)
	}
}

// errorSampler keeps the first few distinct error messages.
type errorSampler struct {
	seen map[string]bool
	list []string
}

func (e *errorSampler) add(err error) {
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	if e.seen[msg] || len(e.list) >= 5 {
		return
	}
	e.seen[msg] = true
	e.list = append(e.list, msg)
}
