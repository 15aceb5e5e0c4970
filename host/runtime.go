package host

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

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
	// about that much of it (default 250 ms; a message that ends sooner costs no write).
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
	// TraceUsers records the turn's user on its span (enduser.id); off by default.
	TraceUsers bool
	// TraceContent records tool call arguments and results on the host's execute_tool
	// spans (the GenAI conventions' opt-in content capture); off by default.
	TraceContent bool
}

// DefaultSnapshotInterval is Config.SnapshotInterval's default.
const DefaultSnapshotInterval = 250 * time.Millisecond

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

	baseCtx context.Context
	stop    context.CancelCauseFunc
	wg      sync.WaitGroup
	workers *gopool.Pool // runs' goroutines, kept with their grown stacks

	compaction CompactionPolicy

	maxRunsPerUser int
	userRuns       userRuns

	snapshotEvery time.Duration

	stateBudget  StateBudget
	stateLocks   stateLocks
	metrics      *metrics.Metrics
	storeBackend string
	tracer       trace.Tracer
	traced       bool // a tracer is configured
	traceUsers   bool
	traceContent bool

	mu          sync.Mutex
	runs        map[runKey]*Run // live and recently finished runs
	compacting  map[string]bool // sessions being compacted → another check is due
	held        heldEnds        // run ends the store could not record yet
	noSummarize map[string]bool // agents whose runner has no Summarize
	caps        map[string]*runnerv1.Capabilities
	agentErrs   map[string]string // unavailable agents → why (SetAgentError)
	reloadErrs  map[string]string // agents whose last reload failed → why

	hist        historyCache     // projected history of recently active sessions
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
		workers:   gopool.New(gopool.RunIdle),
		store:     cfg.Store,
		agents:    map[string]Agent{},
		log:       cfg.Logger,
		retention: cfg.Retention,
		defUser:   cfg.DefaultUser,
		attach:    cfg.Attachments,
		attachTTL: cfg.AttachmentWait,
		runs:      map[runKey]*Run{},

		compaction:  cfg.Compaction.withDefaults(),
		compacting:  map[string]bool{},
		noSummarize: map[string]bool{},
		caps:        map[string]*runnerv1.Capabilities{},
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
	rt.traceContent = cfg.TraceContent
	if rt.tracer == nil {
		rt.tracer = noop.NewTracerProvider().Tracer("")
	}
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
	more = rt.hist.evictIdle(time.Now().Add(-histIdle))
	rt.mu.Lock()
	runs := make(map[runKey]*Run, len(rt.runs))
	for k, r := range rt.runs {
		runs[k] = r
	}
	rt.runs = runs
	rt.mu.Unlock()
	return more
}

// AgentInfo describes a hosted agent.
type AgentInfo struct {
	Name        string
	Description string
	Framework   string
}

// Agents lists the hosted agents that can serve, in the order they were configured (the
// command line's): the first is every surface's default agent. Unavailable lists the others.
func (rt *Runtime) Agents() []AgentInfo {
	out := make([]AgentInfo, 0, len(rt.order))
	rt.mu.Lock()
	for _, n := range rt.order {
		a := rt.agents[n]
		if _, bad := rt.agentErrs[n]; bad {
			continue
		}
		out = append(out, AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework})
	}
	rt.mu.Unlock()
	return out
}

// DefaultUser is the user of requests that name none.
func (rt *Runtime) DefaultUser() string { return rt.defUser }

func (rt *Runtime) agent(name string) (Agent, error) {
	if a, ok := rt.agents[name]; ok {
		if reason := rt.agentError(a.Name); reason != "" {
			return Agent{}, unavailableErr(a.Name, reason)
		}
		return a, nil
	}
	if name == "" && len(rt.agents) == 1 {
		for _, a := range rt.agents {
			if reason := rt.agentError(a.Name); reason != "" {
				return Agent{}, unavailableErr(a.Name, reason)
			}
			return a, nil
		}
	}
	if name == "" {
		// Of several agents only one can serve (the others are unavailable): it is the default.
		if up := rt.Agents(); len(up) == 1 {
			return rt.agents[up[0].Name], nil
		}
	}
	names := make([]string, 0, len(rt.agents))
	for n := range rt.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	if name == "" {
		return Agent{}, clientErr(ErrUnknownAgent, "model", "model is required: this server hosts %s", strings.Join(names, ", "))
	}
	return Agent{}, clientErr(ErrUnknownAgent, "model", "the model %q does not exist; this server hosts: %s", name, strings.Join(names, ", "))
}

// ResolveModel resolves an OpenAI-style "model" field, which names a hosted agent or
// overrides the model (KsADK's "model or agent name override"): a name that is no hosted
// agent goes to the only agent when there is just one, and comes back as override for
// TurnRequest.Model; with several agents it is ErrUnknownAgent naming them.
func (rt *Runtime) ResolveModel(model string) (agent AgentInfo, override string, err error) {
	agent, err = rt.ResolveAgent(model)
	if err == nil || model == "" || len(rt.agents) != 1 {
		return agent, "", err
	}
	for _, a := range rt.agents {
		agent = AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework}
	}
	return agent, model, nil
}

// ResolveAgent returns the agent a request's model names (the only agent when empty and
// there is just one).
func (rt *Runtime) ResolveAgent(name string) (AgentInfo, error) {
	a, err := rt.agent(name)
	if err != nil {
		return AgentInfo{}, err
	}
	return AgentInfo{Name: a.Name, Description: a.Description, Framework: a.Framework}, nil
}

// AgentNative returns the framework-native description of the agent its runner reported
// in Describe (DescribeResponse.native_json; nil when it sent none): the ADK bridge's
// is the app info and graphs ADK's dev UI shows.
func (rt *Runtime) AgentNative(ctx context.Context, name string) (json.RawMessage, error) {
	ag, err := rt.agent(name)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := ag.Runner.Describe(dctx, &runnerv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("%w: describe the agent's runner: %w", ErrUnavailable, err)
	}
	if n := d.GetNativeJson(); len(n) > 0 && json.Valid(n) {
		return n, nil
	}
	return nil, nil
}

// capabilities returns what the agent's runner reported in Describe (the supervisor
// asks when a runner process starts and answers from that), or nil when it cannot tell:
// the caller then assumes nothing is missing and lets the run report what fails.
func (rt *Runtime) capabilities(ctx context.Context, ag Agent) *runnerv1.Capabilities {
	rt.mu.Lock()
	c, ok := rt.caps[ag.Name]
	rt.mu.Unlock()
	if ok {
		return c
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := ag.Runner.Describe(dctx, &runnerv1.DescribeRequest{})
	if err != nil {
		rt.log.Warn("could not describe the agent's runner", "agent", ag.Name, "error", err)
		return nil
	}
	c = d.GetCapabilities()
	if c == nil {
		c = &runnerv1.Capabilities{}
	}
	rt.mu.Lock()
	rt.caps[ag.Name] = c
	if !c.Summarize {
		rt.noSummarize[ag.Name] = true // compaction uses its extractive summary
	}
	rt.mu.Unlock()
	return c
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

// newID returns prefix and 24 hex digits: the time in milliseconds (48 bits), then 48
// random bits. Ids made later sort after earlier ones (to the millisecond), so the
// stores' indexes on them (sessions, runs, responses, items) grow at one end: a random
// key puts each insert on a different index page, and every page an insert touches is
// written again at commit (SQLite's WAL, Postgres's WAL and its full-page images).
func newID(prefix string) string {
	b := idAt(time.Now())
	var buf [64]byte // one allocation, the string's, for any prefix of ours
	out := append(buf[:0], prefix...)
	return string(hex.AppendEncode(out, b[:]))
}

func idAt(t time.Time) (b [12]byte) {
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixMilli())<<16) //nolint:gosec // G115: a time after 1970
	if _, err := rand.Read(b[6:]); err != nil {
		panic("host: crypto/rand failed: " + err.Error())
	}
	return b
}

// NewID returns a new id with the given prefix (see newID), for surfaces that name
// things before starting a run (response ids).
func NewID(prefix string) string { return newID(prefix) }

// Session returns a session of the user, for surfaces that resolve ids.
func (rt *Runtime) Session(ctx context.Context, key session.Key) (session.Session, error) {
	s, err := rt.store.GetSession(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return s, clientErr(ErrNotFound, "", "session %q not found", key.ID)
	}
	return rt.withHeldEnd(s), err
}

// RunByResponseID finds the run of a response id among the user's runs.
func (rt *Runtime) RunByResponseID(ctx context.Context, user, responseID string) (session.Run, error) {
	r, err := rt.store.GetRunByResponseID(ctx, user, responseID)
	if errors.Is(err, session.ErrNotFound) {
		return r, clientErr(ErrNotFound, "", "response %q not found", responseID)
	}
	return r, err
}

// DeleteResponse hides a response from lookups; the session's events stay.
func (rt *Runtime) DeleteResponse(ctx context.Context, user, responseID string) error {
	err := rt.store.DeleteRunResponse(ctx, user, responseID)
	if errors.Is(err, session.ErrNotFound) {
		return clientErr(ErrNotFound, "", "response %q not found", responseID)
	}
	return err
}

// FindItem resolves an item id (item_reference) among the user's sessions of app.
func (rt *Runtime) FindItem(ctx context.Context, app, user, itemID string) (session.Event, error) {
	e, err := rt.store.FindItem(ctx, app, user, itemID)
	if errors.Is(err, session.ErrNotFound) {
		return e, clientErr(ErrNotFound, "input", "item %q not found", itemID)
	}
	return e, err
}

// Open returns the run of an invocation: the live one if it is still in memory, else one
// rebuilt from the store whose journal holds the stored events only.
func (rt *Runtime) Open(ctx context.Context, key session.Key, invocationID string) (*Run, error) {
	rt.mu.Lock()
	r, ok := rt.runs[runKey{key, invocationID}]
	rt.mu.Unlock()
	if ok {
		return r, nil
	}
	if rt.cluster != nil {
		if r, ok, err := rt.follow(ctx, key, invocationID); ok || err != nil {
			return r, err
		}
	}
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if errors.Is(err, session.ErrNotFound) {
		return nil, clientErr(ErrNotFound, "", "run %q not found", invocationID)
	}
	if err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: invocationID})
	if err != nil {
		return nil, fmt.Errorf("load run events: %w", err)
	}
	r = &Run{Key: key, InvocationID: invocationID, ResponseID: rec.ResponseID, Agent: key.App,
		CreatedAt: rec.CreatedAt, Meta: rec.Meta, status: rec.Status, j: newJournal(), done: make(chan struct{})}
	for i := range evs {
		r.j.add(Event{Kind: KindStored, Stored: &evs[i]})
	}
	r.j.close()
	close(r.done)
	return r, nil
}

// Cancel stops a live run; it ends with run_status=cancelled.
func (rt *Runtime) Cancel(ctx context.Context, key session.Key, invocationID string) error {
	rt.mu.Lock()
	r, ok := rt.runs[runKey{key, invocationID}]
	rt.mu.Unlock()
	if ok && r.cancel != nil {
		select {
		case <-r.done:
		default:
			r.cancel(errCancelled)
			return nil
		}
	}
	if rt.cluster != nil {
		// Executed by another replica: the request goes to it.
		sent, err := rt.cluster.RequestCancel(ctx, key, invocationID)
		if err != nil {
			return fmt.Errorf("cancel run: %w", err)
		}
		if sent {
			return nil
		}
	}
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if errors.Is(err, session.ErrNotFound) {
		return clientErr(ErrNotFound, "", "run %q not found", invocationID)
	}
	if err != nil {
		return fmt.Errorf("load run: %w", err)
	}
	if rec.Status == session.StatusInProgress {
		// Recorded in progress, executed by no one (its end was lost): cancelling ends it.
		if err := rt.endStuckRun(ctx, key, invocationID); err != nil {
			return fmt.Errorf("end stuck run: %w", err)
		}
		return nil
	}
	return clientErr(ErrRunNotActive, "", "run %q is not in progress (status %s)", invocationID, rec.Status)
}

// Start validates a turn, records it and starts the runner. The run is detached from
// ctx: it goes on when the caller goes away, until it ends or is cancelled.
func (rt *Runtime) Start(ctx context.Context, req TurnRequest) (_ *Run, err error) {
	ag, err := rt.agent(req.App)
	if err != nil {
		return nil, err
	}
	ctx, span := rt.startTurnSpan(ctx, ag.Name, req.Surface)
	handed := false // to the run, which ends the span
	defer func() {
		if !handed {
			if err != nil {
				span.SetStatus(otelcodes.Error, ClientMessage(err))
			}
			span.End()
		}
	}()
	req.App = ag.Name
	if req.User == "" {
		req.User = rt.defUser
	}
	if err := checkInput(req); err != nil {
		return nil, err
	}
	if len(req.Input.Resumes) > 0 && req.SessionID == "" {
		return nil, clientErr(ErrNoPendingApproval, "input", "an approval response must continue the session that asked for it: send conversation or previous_response_id")
	}
	if !rt.reserveRun(req.User) {
		return nil, clientErr(ErrTooManyRuns, "", "user %q already has %d runs in progress, the most allowed; wait for one to end", req.User, rt.maxRunsPerUser)
	}
	started := false
	defer func() {
		if !started {
			rt.releaseRun(req.User)
		}
	}()
	// Files are resolved before anything is recorded: a bad reference stores nothing.
	files, err := rt.resolveFiles(ctx, req.User, req.Input.Content)
	if err != nil {
		return nil, err
	}
	key, sess, err := rt.openSession(ctx, req)
	if err != nil {
		return nil, err
	}
	// The previous run's end, held while the store failed, is recorded first: the store
	// allows one run in progress per session.
	if err := rt.flushHeld(ctx, key); err != nil {
		rt.log.Error("held run end still not recorded", "session", key.ID, "error", err)
		return nil, clientErr(ErrUnavailable, "", "the session store cannot record writes at the moment; try again later")
	}
	resumes, err := rt.pendingApprovals(ctx, key, req.Input.Resumes)
	if err != nil {
		return nil, err
	}
	if req.InvocationID == "" {
		req.InvocationID = newID("run_")
	} else if err := ValidateID(req.InvocationID); err != nil {
		return nil, clientErr(ErrInvalidInput, "invocation_id", "invalid invocation id: %v", err)
	}
	caps := rt.capabilities(ctx, ag)
	if len(resumes) > 0 && caps != nil && !caps.Resume {
		return nil, clientErr(ErrInvalidInput, "input", "agent %q cannot resume an interrupted run: its runner does not support resume", ag.Name)
	}
	if req.ContinueFrom != nil {
		if err := rt.checkContinue(ctx, key, ag.Name, caps, req.ContinueFrom); err != nil {
			return nil, err
		}
	}
	rt.awaitResults(ctx, files)
	opening := openingEvents(req, ag.Name, resumes, files)
	now := time.Now().UTC()
	create := sess == nil
	if create {
		// Created by StartRun, in the run's transaction, at the run's time.
		sess = &session.Session{Key: key, CreatedAt: now, UpdatedAt: now}
	}
	run := session.Run{
		InvocationID: req.InvocationID, ResponseID: req.ResponseID, Key: key,
		Status: session.StatusInProgress, Meta: req.Meta, CreatedAt: now, UpdatedAt: now,
		CreateSession: create,
	}
	var (
		stored  []session.Event
		state   *session.State
		pending *pendingStart
	)
	if startsLater(req, resumes) {
		pending, stored = newPendingStart(run, opening)
		st, err := rt.store.NewSessionState(ctx, key.App, key.User)
		if err != nil {
			return nil, fmt.Errorf("load state: %w", err)
		}
		state = &st
	} else {
		began, end := time.Now(), rt.storeSpan(ctx, "start_run")
		stored, state, err = rt.startRunInBudget(ctx, run, opening)
		rt.metrics.StoreWrite(rt.storeBackend, time.Since(began))
		end(err)
	}
	if errors.Is(err, session.ErrRunActive) {
		return nil, clientErr(ErrRunActive, "", "session %q already has a run in progress; wait for it to end or cancel it", key.ID)
	}
	if errors.Is(err, session.ErrExists) {
		return nil, clientErr(ErrRunActive, "invocation_id", "invocation id %q is already used in session %q; every run needs a new one", req.InvocationID, key.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("record turn: %w", err)
	}
	rr, err := rt.buildRunRequest(ctx, sess, state, req, resumes, stored[0].Seq, files, caps)
	if err != nil {
		if pending == nil { // else nothing was recorded
			rt.abortStart(key, req.InvocationID, ag.Name, err)
		}
		return nil, err
	}
	rt.identifyTurn(span, key, req.InvocationID)
	base := rt.baseCtx
	if rt.traced {
		base = trace.ContextWithSpan(base, span) // the run's spans are the turn's children
	}
	runCtx, cancel := context.WithCancelCause(base)
	handed = true
	r := &Run{rt: rt, Key: key, InvocationID: req.InvocationID, ResponseID: req.ResponseID, Agent: ag.Name,
		CreatedAt: now, Meta: req.Meta, status: session.StatusInProgress,
		j: newJournal(), done: make(chan struct{}), cancel: cancel, pending: pending, private: pending != nil,
		transcript: len(req.Input.Items) > 0, surface: req.Surface}
	for i := range stored {
		r.j.add(Event{Kind: KindStored, Stored: &stored[i]})
	}
	rt.mu.Lock()
	rt.runs[runKey{r.Key, r.InvocationID}] = r
	rt.mu.Unlock()
	rt.wg.Add(1)
	started = true
	rt.metrics.RunStarted(ag.Name)
	// Only the user is captured of the request, and the run request is an argument: both
	// may carry megabytes of input, which are let go once sent, not held to the run's end.
	user := req.User
	// A run outlives the request that started it; runCtx is its own.
	rt.workers.Go(func() {
		defer rt.wg.Done()
		defer cancel(nil)
		defer rt.releaseRun(user)
		// The closure lets go of the run request: execute holds it until it is sent.
		sent := rr
		rr = nil
		ctx := runCtx
		if ag.RunTimeout > 0 {
			var stop context.CancelFunc
			ctx, stop = context.WithTimeoutCause(runCtx, ag.RunTimeout, errRunTimeout)
			defer stop()
		}
		rt.execute(ctx, ag, r, sent)
		rt.maybeCompact(rt.baseCtx, ag, key, r.hist)
	})
	return r, nil
}

// stateStarter is a store that reads the session's state in the round trip that starts
// a run (the Postgres store): a turn needs both.
type stateStarter interface {
	StartRunWithState(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, session.State, error)
}

// startRun records the run's start; the state is nil when the store does not read it
// with the start (the request's building reads it then).
func (rt *Runtime) startRun(ctx context.Context, run session.Run, opening []session.NewEvent) ([]session.Event, *session.State, error) {
	if ss, ok := rt.store.(stateStarter); ok {
		evs, st, err := ss.StartRunWithState(ctx, run, opening...)
		return evs, &st, err
	}
	evs, err := rt.store.StartRun(ctx, run, opening...)
	return evs, nil, err
}

// startRunInBudget is startRun for opening events that may write state (a turn's
// stateDelta): they are checked against the state budget first.
func (rt *Runtime) startRunInBudget(ctx context.Context, run session.Run, opening []session.NewEvent) ([]session.Event, *session.State, error) {
	if !hasStateDelta(opening) {
		return rt.startRun(ctx, run, opening)
	}
	defer rt.stateLocks.lock(run.Key.App)()
	if err := rt.checkStateBudget(ctx, run.Key, run.CreateSession, opening); err != nil {
		return nil, nil, err
	}
	return rt.startRun(ctx, run, opening)
}

// abortStart closes a run that was recorded but could not be handed to its runner.
func (rt *Runtime) abortStart(key session.Key, invocationID, author string, cause error) {
	rt.log.Error("turn could not start", "invocation", invocationID, "error", cause)
	data := session.RunStatusData{Status: session.StatusFailed, Error: &session.RunError{Code: "server_error", Message: ClientMessage(cause)}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rt.store.FinishRun(ctx, key, invocationID, session.StatusFailed, session.NewEvent{
		InvocationID: invocationID, Type: session.TypeRunStatus, Author: author, Data: session.MustJSON(data),
	}); err != nil {
		rt.log.Error("could not record failed start", "invocation", invocationID, "error", err)
	}
}

// openSession returns the session a turn runs in: its row, or nil when the turn's
// StartRun is to create it (a new conversation, or a client-named one that is missing
// and may be created).
func (rt *Runtime) openSession(ctx context.Context, req TurnRequest) (session.Key, *session.Session, error) {
	key := session.Key{App: req.App, User: req.User, ID: req.SessionID}
	if key.ID == "" {
		key.ID = newID("sess_")
		return key, nil, nil
	}
	if err := ValidateID(key.ID); err != nil {
		return key, nil, clientErr(ErrInvalidInput, "conversation", "invalid session id: %v", err)
	}
	s, err := rt.store.GetSession(ctx, key)
	if err == nil {
		return key, &s, nil
	}
	if !errors.Is(err, session.ErrNotFound) {
		return key, nil, fmt.Errorf("load session: %w", err)
	}
	if !req.CreateIfMissing {
		return key, nil, clientErr(ErrNotFound, "conversation", "session %q not found", key.ID)
	}
	if len(req.Input.Resumes) > 0 {
		// Nothing can be pending in a session that does not exist; create nothing.
		return key, nil, clientErr(ErrNoPendingApproval, "input", "session %q has no pending approval request to resume", key.ID)
	}
	// StartRun creates it; one a concurrent request created first is the same session.
	return key, nil, nil
}

// ValidateID checks a client-chosen id: printable, bounded, no control characters.
func ValidateID(id string) error {
	if id == "" || len(id) > 256 {
		return errors.New("ids are 1 to 256 characters")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errors.New("ids must not contain control characters")
		}
	}
	return nil
}

func openingEvents(req TurnRequest, author string, resumes []pendingApproval, files []turnFile) []session.NewEvent {
	var evs []session.NewEvent
	for _, p := range resumes {
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, Type: session.TypeApprovalResponse, Author: "user",
			Data: session.MustJSON(session.ApprovalResponseData{ApprovalRequestID: p.itemID, Approve: p.resume.Approve, Reason: p.resume.Reason, Output: p.resume.Output}),
		})
	}
	if len(req.Input.Content) > 0 || len(req.Input.Items) > 0 {
		d := session.NewUserMessageData(req.Input.Text(), req.Input.Content)
		d.Items, d.Instructions, d.Metadata = req.Input.Items, req.Instructions, req.Metadata
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, ItemID: req.Input.MessageID, Type: session.TypeUserMessage, Author: "user",
			Data: session.MustJSON(d),
		})
	}
	evs = append(evs, attachmentRefEvents(req.InvocationID, files)...)
	if len(req.StateDelta) > 0 {
		// Recorded with the turn's other opening events: a rejected turn changes no state.
		evs = append(evs, session.NewEvent{
			InvocationID: req.InvocationID, Type: session.TypeStateDelta, Author: "user",
			Data: req.StateDelta, StateDelta: req.StateDelta,
		})
	}
	evs = append(evs, session.NewEvent{
		InvocationID: req.InvocationID, Type: session.TypeRunStatus, Author: author,
		Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress}),
	})
	return evs
}
