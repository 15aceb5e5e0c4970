// Package metrics holds agentengine's Prometheus metrics: one registry per server (never
// the process-wide default), the collectors the host, the runners' supervisors and the
// HTTP router update, and the handler that serves them in Prometheus's text format.
//
// Labels carry only bounded, non-personal values: agent, model and tool names (the
// project's code chooses them), route patterns, statuses and reasons; never a user id,
// a session id or any text of a conversation.
//
// A nil *Metrics records nothing, so code paths need no checks when metrics are off.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "agentengine"

// Token directions (the tokens_total direction label).
const (
	DirectionInput  = "input"
	DirectionOutput = "output"
)

// Tool call statuses (the tool_calls_total status label).
const (
	ToolOK               = "ok"
	ToolError            = "error"
	ToolApprovalRequired = "approval_required"
)

// Runner restart reasons (the runner_restarts_total reason label).
const (
	RestartExited      = "exited"
	RestartUnhealthy   = "unhealthy"
	RestartStartFailed = "start_failed"
)

// Metrics is one server's set of metrics. Safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	runs        children[[2]string, prometheus.Counter]
	inProgress  children[string, prometheus.Gauge]
	turn        children[[2]string, prometheus.Observer]
	firstToken  children[string, prometheus.Observer]
	tokens      children[[3]string, prometheus.Counter]
	tools       children[[3]string, prometheus.Counter]
	restarts    *prometheus.CounterVec
	procs       *prometheus.GaugeVec
	storeWrite  children[string, prometheus.Observer]
	subscribers prometheus.Gauge
	http        children[httpLabels, prometheus.Counter]
}

// children holds a metric vector's children by their label values. Resolving a child
// through the vector hashes and checks its labels every time, a few hundred
// nanoseconds, and a turn updates several; a lookup here is a read-locked map access.
// Labels are bounded by design (see the package's doc), so this map is too, as the
// vector's own is.
type children[K comparable, M any] struct {
	mu    sync.RWMutex
	byKey map[K]M
	child func(K) M // resolves a child through the vector
}

func newChildren[K comparable, M any](child func(K) M) children[K, M] {
	return children[K, M]{byKey: map[K]M{}, child: child}
}

func (c *children[K, M]) get(k K) M {
	c.mu.RLock()
	m, ok := c.byKey[k]
	c.mu.RUnlock()
	if ok {
		return m
	}
	m = c.child(k) // the vector returns the same child to concurrent callers
	c.mu.Lock()
	c.byKey[k] = m
	c.mu.Unlock()
	return m
}

// httpLabels are http_requests_total's labels, the code kept as a number until a child
// is made (strconv.Itoa allocates).
type httpLabels struct {
	route string
	code  int
}

// Buckets of the turn and first-token histograms, in seconds: agents' turns take from
// milliseconds (a scripted model) to minutes (tool loops on a remote model).
var turnBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Buckets of the store write histogram, in seconds.
var storeBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// New returns a set of metrics on a registry of its own, with the Go runtime's and the
// process's collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_total",
		Help: "Runs (turns) ended, by agent and terminal status."}, []string{"agent", "status"})
	inProgress := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "runs_in_progress",
		Help: "Runs executing on this host, by agent."}, []string{"agent"})
	turn := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "turn_duration_seconds",
		Help: "Time from a turn's start to its end, by agent and the surface that started it.", Buckets: turnBuckets},
		[]string{"agent", "surface"})
	firstToken := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "time_to_first_token_seconds",
		Help: "Time from a turn's start to the first text or reasoning delta of its answer, by agent.", Buckets: turnBuckets},
		[]string{"agent"})
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tokens_total",
		Help: "Tokens the agents' model calls used, as the runners report them, by agent, model and direction (input, output)."},
		[]string{"agent", "model", "direction"})
	tools := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_calls_total",
		Help: "Tool calls of agents, by agent, tool and status (ok, error, approval_required)."}, []string{"agent", "tool", "status"})
	m.restarts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runner_restarts_total",
		Help: "Runner processes that ended or failed to start unasked, by agent and reason (exited, unhealthy, start_failed)."},
		[]string{"agent", "reason"})
	m.procs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "runner_processes",
		Help: "Runner processes alive, by agent."}, []string{"agent"})
	storeWrite := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "store_write_seconds",
		Help: "Duration of the session store writes of turns, by backend.", Buckets: storeBuckets}, []string{"backend"})
	m.subscribers = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "stream_subscribers",
		Help: "Clients following a run's stream now."})
	httpRequests := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by route pattern and status code."}, []string{"route", "code"})
	m.reg.MustRegister(runs, inProgress, turn, firstToken, tokens, tools, m.restarts, m.procs, storeWrite,
		m.subscribers, httpRequests, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.runs = newChildren(func(l [2]string) prometheus.Counter { return runs.WithLabelValues(l[:]...) })
	m.inProgress = newChildren(func(agent string) prometheus.Gauge { return inProgress.WithLabelValues(agent) })
	m.turn = newChildren(func(l [2]string) prometheus.Observer { return turn.WithLabelValues(l[:]...) })
	m.firstToken = newChildren(func(agent string) prometheus.Observer { return firstToken.WithLabelValues(agent) })
	m.tokens = newChildren(func(l [3]string) prometheus.Counter { return tokens.WithLabelValues(l[:]...) })
	m.tools = newChildren(func(l [3]string) prometheus.Counter { return tools.WithLabelValues(l[:]...) })
	m.storeWrite = newChildren(func(backend string) prometheus.Observer { return storeWrite.WithLabelValues(backend) })
	m.http = newChildren(func(l httpLabels) prometheus.Counter {
		return httpRequests.WithLabelValues(l.route, strconv.Itoa(l.code))
	})
	return m
}

// Handler serves the metrics in Prometheus's text (or negotiated) format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gatherer is the registry, for tests and for exporting the same metrics elsewhere.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// RunStarted counts a run executing.
func (m *Metrics) RunStarted(agent string) {
	if m == nil {
		return
	}
	m.inProgress.get(agent).Inc()
}

// RunEnded counts a run's end with its terminal status and how long it took.
func (m *Metrics) RunEnded(agent, surface, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.inProgress.get(agent).Dec()
	m.runs.get([2]string{agent, status}).Inc()
	if surface == "" {
		surface = "other"
	}
	m.turn.get([2]string{agent, surface}).Observe(d.Seconds())
}

// FirstToken records the time to a run's first streamed token.
func (m *Metrics) FirstToken(agent string, d time.Duration) {
	if m == nil {
		return
	}
	m.firstToken.get(agent).Observe(d.Seconds())
}

// Tokens counts one model call's (or usage report's) tokens. An empty model is
// "unknown": the runner did not say.
func (m *Metrics) Tokens(agent, model string, input, output int64) {
	if m == nil {
		return
	}
	if model == "" {
		model = "unknown"
	}
	if input > 0 {
		m.tokens.get([3]string{agent, model, DirectionInput}).Add(float64(input))
	}
	if output > 0 {
		m.tokens.get([3]string{agent, model, DirectionOutput}).Add(float64(output))
	}
}

// ToolCall counts a tool call's outcome.
func (m *Metrics) ToolCall(agent, tool, status string) {
	if m == nil {
		return
	}
	m.tools.get([3]string{agent, tool, status}).Inc()
}

// StoreWrite records one store write's duration.
func (m *Metrics) StoreWrite(backend string, d time.Duration) {
	if m == nil {
		return
	}
	m.storeWrite.get(backend).Observe(d.Seconds())
}

// Subscribed counts a client following a run's stream; call the returned function when
// it stops.
func (m *Metrics) Subscribed() (done func()) {
	if m == nil {
		return func() {}
	}
	m.subscribers.Inc()
	return m.subscribers.Dec
}

// HTTPRequest counts an answered request. route is the matched route's pattern
// ("/v1/responses/:id"), never the path itself, which carries ids.
func (m *Metrics) HTTPRequest(route string, code int) {
	if m == nil {
		return
	}
	m.http.get(httpLabels{route, code}).Inc()
}

// Runner returns the callbacks for one agent's runner supervisors: processes alive
// (runner_processes) and unasked ends (runner_restarts_total).
func (m *Metrics) Runner(agent string) (started, stopped func(), failed func(reason string)) {
	if m == nil {
		return nil, nil, nil
	}
	g := m.procs.WithLabelValues(agent)
	return g.Inc, g.Dec, func(reason string) { m.restarts.WithLabelValues(agent, reason).Inc() }
}
