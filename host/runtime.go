package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentengine/agentengine/host/internal/history"
	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/internal/gopool"
	"github.com/agentengine/agentengine/internal/metrics"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// Agent is a hosted agent: a name clients select it by and the runner that executes it.
type Agent struct {
	Name        string
	Description string
	Framework   string
	Runner      runnerv1.RunnerClient
	// Workspace, when set, receives the files the agent reports with "workspace.file"
	// native events (DeepAgents' virtual filesystem), so they show in its listing.
	Workspace *workspace.Workspace
	// RunTimeout, when set, ends a run still going after it failed (run_timeout).
	RunTimeout time.Duration
}

// Config configures a Runtime.
type Config struct {
	Store  session.Store
	Agents []Agent
	Logger hclog.Logger
	// Retention is how long a finished run's journal stays in memory for late
	// subscribers before they are served from the store instead (default 2 minutes).
	Retention time.Duration
	// DefaultUser owns sessions of requests that name no user (default "user").
	DefaultUser string
	// Attachments, when set, stores the turns' files and extracts their text for the
	// runner; without it files reach the runner as sent, unextracted.
	Attachments Attachments
	// AttachmentWait bounds how long a turn waits for its files' text (default 30 s);
	// a file still being extracted then is passed on as skipped, with a warning.
	AttachmentWait time.Duration
	// Compaction decides when session history is summarised into a checkpoint.
	Compaction CompactionPolicy
	// MaxRunsPerUser caps each user's runs in progress across all agents (0: no cap);
	// a turn over it is refused with ErrTooManyRuns.
	MaxRunsPerUser int
	// SnapshotInterval is how often the text of a message still streaming is stored
	// (assistant_stream_snapshot), so that a host that dies mid-message loses at most
	// about that much of it (default 500 ms, KsADK's interval; a message that ends
	// sooner costs no write). Each snapshot holds the whole text so far, so a shorter
	// interval costs every stream's store and journal more the longer the message grows.
	SnapshotInterval time.Duration
	// MemoryFreed, when set, is told how much finished runs' memory the runtime let go of
	// (in dropped live events; a run forgotten whole counts ForgottenRunWeight), so that
	// the program can decide when to collect and return memory to the operating system
	// (calling ShedIdle first). The library itself never does.
	MemoryFreed func(events int)
	// Cluster, when set, coordinates the replicas that share Store (the postgres store
	// opened as a replica offers it): runs relay their journals, cancels and orphaned
	// runs reach the replica that can act on them. Nil for a single server.
	Cluster Cluster
	// StateBudget bounds each state tier's size; a write that would grow a tier past it
	// is refused with ErrStateTooLarge (a runner's, by failing its run).
	StateBudget StateBudget
	// Metrics, when set, counts runs, tokens, tool calls and store writes.
	Metrics *metrics.Metrics
	// StoreBackend names the store in metrics ("sqlite"); default "store".
	StoreBackend string
	// Tracer makes the turns' spans (nil: OpenTelemetry's no-op tracer, no spans).
	Tracer trace.Tracer
	// KeptTracer, when set, makes the spans that are kept in memory but not exported:
	// the host's view of a tool call the runner traced itself. The runner's span goes
	// to the collector (one span per call there); the kept traces, which the runner's
	// spans do not reach, still show the call.
	KeptTracer trace.Tracer
	// TraceUsers records the turn's user on its span (enduser.id); off by default.
	TraceUsers bool
	// TraceContent records tool call arguments and results on the host's execute_tool
	// spans (the GenAI conventions' opt-in content capture); off by default.
	TraceContent bool
}

// DefaultSnapshotInterval is Config.SnapshotInterval's default.
const DefaultSnapshotInterval = 500 * time.Millisecond

// Runtime runs turns for every surface. It is safe for concurrent use.
type Runtime struct {
	store     session.Store
	cluster   Cluster // nil with a single-replica store
	relays    relays  // publishers of runs followed from other replicas (cluster.go)
	agents    map[string]Agent
	order     []string // agent names in the order of Config.Agents
	log       hclog.Logger
	retention time.Duration
	// compactAfter is when a finished run's journal is compacted (journalCompactAfter).
	compactAfter time.Duration
	defUser      string
	attach       Attachments
	attachTTL    time.Duration

	// baseCtx is the runtime's lifetime, the parent of every run's context and of the
	// writes that outlive a turn: a run outlives the request that started it, and Close
	// ends them all by cancelling it (stop). It is the one context the runtime keeps.
	baseCtx context.Context
	stop    context.CancelCauseFunc
	wg      sync.WaitGroup
	// workers run the runs' steps (a start, a burst of the runner's events, the end),
	// kept with their grown stacks; a run waiting for its runner holds none.
	workers *gopool.Pool

	compaction CompactionPolicy

	maxRunsPerUser int
	userRuns       userRuns

	snapshotEvery time.Duration

	stateBudget  StateBudget
	stateLocks   stateLocks
	metrics      *metrics.Metrics
	storeBackend string
	tracer       trace.Tracer
	keptTracer   trace.Tracer // nil: see Config.KeptTracer
	traced       bool         // a tracer is configured
	traceUsers   bool
	traceContent bool
	// The span kinds' start options, made once: a call with a new option allocates
	// the option and its variadic slice every span.
	internalSpan, clientSpan []trace.SpanStartOption
	agentSpans               map[string]agentSpanNames // by agent
	storeOps                 map[string]storeOp        // a store write span's name and attributes, by operation

	mu          sync.Mutex
	runs        map[runKey]*Run // live and recently finished runs
	compacting  map[string]bool // sessions being compacted → another check is due
	held        heldEnds        // run ends the store could not record yet
	noSummarize map[string]bool // agents whose runner has no Summarize
	caps        map[string]*runnerv1.Capabilities
	natives     map[string]json.RawMessage // AgentNative's answers, by agent
	nativeAsks  map[string]chan struct{}   // AgentNative's questions in flight, by agent
	agentErrs   map[string]string          // unavailable agents → why (SetAgentError)
	reloadErrs  map[string]string          // agents whose last reload failed → why

	hist        *history.Cache   // projected history of recently active sessions
	memoryFreed func(events int) // Config.MemoryFreed, never nil
}

// runKey indexes runs by session and invocation: invocation ids may be chosen by
// clients, so one session's id must never shadow another session's run.
type runKey struct {
	session      session.Key
	invocationID string
}

// errShutdown is the cancel cause of runs stopped by Close: they end interrupted.
var errShutdown = errors.New("host shutting down")

// errCancelled is the cancel cause of runs stopped by Cancel: they end cancelled.
var errCancelled = errors.New("run cancelled")

// errRunTimeout is the cancel cause of runs that outlived their agent's RunTimeout:
// they end failed.
var errRunTimeout = errors.New("run time limit reached")

// New builds a Runtime. Call Recover once before serving.
func New(cfg Config) (*Runtime, error) {
	if cfg.Store == nil {
		return nil, errors.New("host: a session store is required")
	}
	rt := &Runtime{
		workers:   gopool.NewBounded(gopool.RunIdle, maxIdleRunWorkers),
		store:     cfg.Store,
		agents:    map[string]Agent{},
		log:       cfg.Logger,
		retention: cfg.Retention,
		defUser:   cfg.DefaultUser,
		attach:    cfg.Attachments,
		attachTTL: cfg.AttachmentWait,
		runs:      map[runKey]*Run{},
		hist:      history.New(cfg.Store),

		compaction:  cfg.Compaction.withDefaults(),
		compacting:  map[string]bool{},
		noSummarize: map[string]bool{},
		caps:        map[string]*runnerv1.Capabilities{},
		natives:     map[string]json.RawMessage{},
		nativeAsks:  map[string]chan struct{}{},
		agentErrs:   map[string]string{},
		reloadErrs:  map[string]string{},
	}
	if rt.log == nil {
		rt.log = hclog.NewNullLogger()
	}
	rt.maxRunsPerUser = cfg.MaxRunsPerUser
	rt.stateBudget = cfg.StateBudget.withDefaults()
	rt.snapshotEvery = cmp.Or(cfg.SnapshotInterval, DefaultSnapshotInterval)
	rt.metrics, rt.storeBackend = cfg.Metrics, cmp.Or(cfg.StoreBackend, "store")
	rt.tracer, rt.traceUsers, rt.traced = cfg.Tracer, cfg.TraceUsers, cfg.Tracer != nil
	rt.traceContent, rt.keptTracer = cfg.TraceContent, cfg.KeptTracer
	if rt.tracer == nil {
		rt.tracer = noop.NewTracerProvider().Tracer("")
	}
	rt.internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	rt.clientSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	rt.storeOps = storeOps(rt.storeBackend)
	rt.agentSpans = map[string]agentSpanNames{}
	if rt.retention <= 0 {
		// Long enough for a dropped stream to reconnect and replay with the exact live
		// sequence; short enough that finished runs' deltas don't pile up in memory.
		rt.retention = 2 * time.Minute
	}
	rt.compactAfter = journalCompactAfter
	if rt.defUser == "" {
		rt.defUser = "user"
	}
	if rt.attachTTL <= 0 {
		rt.attachTTL = 30 * time.Second
	}
	for _, a := range cfg.Agents {
		if a.Name == "" || a.Runner == nil {
			return nil, fmt.Errorf("host: agent %q needs a name and a runner", a.Name)
		}
		if _, dup := rt.agents[a.Name]; dup {
			return nil, fmt.Errorf("host: two agents are named %q; names must be unique", a.Name)
		}
		rt.agents[a.Name] = a
		rt.agentSpans[a.Name] = newAgentSpanNames(a.Name)
		rt.order = append(rt.order, a.Name)
	}
	rt.baseCtx, rt.stop = context.WithCancelCause(context.Background())
	if c := cfg.Cluster; c != nil {
		rt.cluster = c
		c.OnCancel(rt.cancelLocal)
		c.OnFollow(rt.followRequested)
		c.OnOrphans(rt.interruptOrphans)
	}
	rt.memoryFreed = cfg.MemoryFreed
	if rt.memoryFreed == nil {
		rt.memoryFreed = func(int) {}
	}
	return rt, nil
}

// histIdle is how long a session's cached history outlives its last turn once the program
// trims its memory (after a burst): a turn after that reads it from the store again.
const histIdle = 30 * time.Second

// ShedIdle lets go of what only a busy host needs: history cache entries idle for
// histIdle, and the runs map's buckets (a Go map never shrinks, and a burst of thousands
// of runs would keep its size for good). Left in place, both pin the heap spans they
// are spread over long after the burst. It reports whether cached entries are left,
// to be let go of once idle. A program that returns memory to the operating system
// after bursts (see Config.MemoryFreed) calls it first.
func (rt *Runtime) ShedIdle() (more bool) {
	more = rt.hist.EvictIdle(time.Now().Add(-histIdle))
	rt.mu.Lock()
	runs := make(map[runKey]*Run, len(rt.runs))
	for k, r := range rt.runs {
		runs[k] = r
	}
	rt.runs = runs
	rt.mu.Unlock()
	return more
}

// Recover marks runs left in progress by a previous host process as interrupted, so every
// run ends with exactly one terminal status even across a crash.
func (rt *Runtime) Recover(ctx context.Context) error {
	list := rt.store.ActiveRuns
	if rt.cluster != nil {
		list = rt.cluster.Orphaned // the other replicas' runs are theirs
	}
	runs, err := list(ctx)
	if err != nil {
		return fmt.Errorf("list orphaned runs: %w", err)
	}
	if rt.cluster != nil {
		rt.interruptOrphans(ctx, runs) // and tells their followers on other replicas
		return nil
	}
	for _, r := range runs {
		rt.mu.Lock()
		_, live := rt.runs[runKey{r.Key, r.InvocationID}]
		rt.mu.Unlock()
		if live {
			continue
		}
		data := session.RunStatusData{Status: session.StatusInterrupted, Error: &session.RunError{Code: "host_restarted", Message: "the host stopped while this run was in progress"}}
		_, err := rt.store.FinishRun(ctx, r.Key, r.InvocationID, session.StatusInterrupted, rt.orphanEnd(ctx, r.Key, r.InvocationID, data)...)
		if err != nil && !errors.Is(err, session.ErrInvalid) {
			return fmt.Errorf("interrupt orphaned run %s: %w", r.InvocationID, err)
		}
		rt.log.Info("marked orphaned run interrupted", "invocation", r.InvocationID, "session", r.Key.ID)
	}
	return nil
}

// Idle waits until no run or post-run work (compaction) is in flight, or ctx ends.
func (rt *Runtime) Idle(ctx context.Context) error {
	done := make(chan struct{})
	go func() { rt.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops every live run (each ends interrupted) and waits for them until ctx ends.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.stop(errShutdown)
	done := make(chan struct{})
	go func() { rt.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("host: runs still finishing: %w", ctx.Err())
	}
}

// maxIdleRunWorkers bounds the idle run workers kept: steps of runs are short, so a few
// serve thousands of open runs, and a burst of run starts (each waits on its runner's
// connection to send the request) leaves no more than this many grown stacks behind.
const maxIdleRunWorkers = 128
