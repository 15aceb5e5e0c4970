// Package runnerproc supervises one agent's runner subprocess: it starts it through
// hashicorp/go-plugin (gRPC only), hands calls to the live process, notices crashes,
// restarts with backoff and stops it without ever hanging. A Supervisor is a
// runnerv1.RunnerClient, so the rest of the host does not know processes exist.
//
// go-plugin traps this package handles (go-plugin v1.8.0; numbers are its GitHub issues): its
// stderr JSON parser can panic the host (#38), Kill hangs while a grandchild holds the plugin's pipes
// and never kills grandchildren (#136), there is no exit callback (#92) or restart (#31),
// long TMPDIRs break unix sockets, and the host's whole environment leaks to plugins.
package runnerproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// Errors a Supervisor's methods wrap; test with errors.Is. ErrExited, ErrBackoff and
// ErrNotRunning also have an Unavailable method: the supervisor has no process for the
// call right now, so another process may take it (runnerpool checks for the method, which
// keeps this package, and go-plugin with it, out of the pool's imports).
var (
	// ErrClosed: the supervisor was closed.
	ErrClosed = errors.New("runner supervisor closed")
	// ErrExited: the runner process exited or its connection broke; calls in flight fail
	// with it. The next call starts a new process.
	ErrExited error = unavailableError("runner process exited")
	// ErrBackoff: the runner failed recently and the next start attempt is not due yet.
	ErrBackoff error = unavailableError("runner is restarting after a failure")
	// ErrNotRunning: Ping found no live process (Ping never starts one).
	ErrNotRunning error = unavailableError("runner is not running")
	// ErrUnresponsive: the runner process stopped responding (a run got no event and
	// the process no health answer within the stall timeout: stopped, deadlocked); its
	// runs fail with it and it is replaced. It is also an ErrExited.
	ErrUnresponsive error = unresponsiveError{}
)

// unresponsiveError is ErrUnresponsive: an ErrExited whose Unresponsive method lets the
// host say why its run failed without importing this package.
type unresponsiveError struct{}

func (unresponsiveError) Error() string      { return "runner process stopped responding" }
func (unresponsiveError) Unavailable() bool  { return true }
func (unresponsiveError) Unresponsive() bool { return true }
func (unresponsiveError) Is(target error) bool {
	return target == ErrExited
}

// unavailableError is an error after which the call may be retried on another process.
type unavailableError string

func (e unavailableError) Error() string { return string(e) }

// Unavailable reports that the supervisor had no process to take the call.
func (unavailableError) Unavailable() bool { return true }

// Config describes how to run one agent's runner.
type Config struct {
	// Name identifies the runner in logs and errors (default: the command's base name).
	Name string
	// Command is the absolute path of the executable and its arguments; no shell is used.
	Command []string
	// Dir is the working directory ("" means the host's).
	Dir string
	// Env is the child's entire environment. Nothing else from the host's environment
	// is passed on; go-plugin adds its cookie and PLUGIN_* variables.
	Env []string
	// StartTimeout bounds spawn + handshake + first health check (default 60s: Python
	// runners import frameworks for seconds).
	StartTimeout time.Duration
	// KillTimeout is how long a graceful stop may take before the process group is
	// SIGKILLed (default 5s).
	KillTimeout time.Duration
	// Logger receives the supervisor's records and the runner's own log lines.
	Logger hclog.Logger
	// Backoff paces restarts after crashes and failed starts.
	Backoff Backoff
	// HealthInterval is the period of health checks on a live process (default 30s;
	// negative disables them). Two failures in a row retire the process.
	HealthInterval time.Duration
	// HealthTimeout bounds one health check (default 5s).
	HealthTimeout time.Duration
	// StallTimeout is how long a run may go without an event before the process is
	// asked for its health (default 15s; negative disables it). A process that does not
	// answer within the stall timeout (or HealthTimeout, if shorter) is wedged
	// (SIGSTOPped, deadlocked): it is retired at once, its runs fail with
	// ErrUnresponsive, a new process is started, and Startable reports it until that one
	// serves. A run that is merely slow (a long model call) is left alone: its process
	// answers the health check.
	StallTimeout time.Duration
	// Events, when set, is told of the processes' starts and ends (for metrics).
	Events Events
	// Fork, when set, starts each process by forking it from a parent that has
	// imported the runner already (a Python zygote, host/prefork) instead of running
	// Command; Command then only names the runner. Everything else is the same: the
	// handshake on the process's stdout, its stderr logged, its own process group.
	Fork ForkFunc
}

// Events are callbacks for a supervisor's process lifecycle; nil ones are skipped. They
// run on the supervisor's goroutines and must not block.
type Events struct {
	// Started: a process is up and serves calls. Stopped: it is gone (exited, retired or
	// closed); each Started is followed by one Stopped.
	Started, Stopped func()
	// Failed: a process ended or failed to start without being asked to; reason is
	// "exited", "unhealthy" or "start_failed".
	Failed func(reason string)
}

func (e Events) failed(reason string) {
	if e.Failed != nil {
		e.Failed(reason)
	}
}

// Backoff paces restarts: the first restart after a failure is immediate, then the delay
// starts at Initial and doubles up to Max. A process that stayed up for Reset clears the
// count.
type Backoff struct {
	Initial time.Duration // default 250ms
	Max     time.Duration // default 30s
	Reset   time.Duration // default 1m
}

// delay is the wait before the next start after the n-th consecutive failure.
func (b Backoff) delay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := b.Initial
	for i := 2; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

func (c *Config) setDefaults() {
	if c.Name == "" && len(c.Command) > 0 && c.Command[0] != "" {
		c.Name = filepath.Base(c.Command[0])
	}
	if c.Name == "" {
		c.Name = "runner"
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = time.Minute
	}
	if c.KillTimeout <= 0 {
		c.KillTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Backoff.Initial <= 0 {
		c.Backoff.Initial = 250 * time.Millisecond
	}
	if c.Backoff.Max <= 0 {
		c.Backoff.Max = 30 * time.Second
	}
	if c.Backoff.Reset <= 0 {
		c.Backoff.Reset = time.Minute
	}
	if c.HealthInterval == 0 {
		c.HealthInterval = 30 * time.Second
	}
	if c.HealthTimeout <= 0 {
		c.HealthTimeout = 5 * time.Second
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = 15 * time.Second
	}
}

func (c *Config) validate() error {
	switch {
	case len(c.Command) == 0 || c.Command[0] == "":
		return fmt.Errorf("runner %q: no command configured", c.Name)
	case !filepath.IsAbs(c.Command[0]):
		return fmt.Errorf("runner %q: command %q must be an absolute path (no PATH lookup, no shell)", c.Name, c.Command[0])
	}
	return nil
}

// Supervisor runs one agent's runner process. It implements runnerv1.RunnerClient by
// delegating to the live process, starting one on first use. Safe for concurrent use.
type Supervisor struct {
	cfg    Config
	cfgErr error
	log    hclog.Logger
	// abort is closed by Close: it ends a start in progress and the monitors.
	abort     chan struct{}
	closeDone chan struct{}

	mu        sync.Mutex
	cur       *proc
	procs     map[*proc]struct{} // every process not yet cleaned up, cur included
	attempt   *attempt
	failures  int
	notBefore time.Time
	lastErr   error
	closed    bool
	// wedged is why the last process was retired as unresponsive, until a new one
	// serves: Startable reports it meanwhile.
	wedged error
}

var _ runnerv1.RunnerClient = (*Supervisor)(nil)

// attempt is one start in progress; everyone who needs a process waits for it.
type attempt struct {
	done chan struct{}
	err  error
}

// New returns a supervisor; nothing starts until Start or the first call. A bad Config
// is reported by Start and by every call.
func New(cfg Config) *Supervisor {
	cfg.Command = append([]string(nil), cfg.Command...)
	cfg.Env = append([]string(nil), cfg.Env...)
	cfg.setDefaults()
	return &Supervisor{
		cfg:       cfg,
		cfgErr:    cfg.validate(),
		log:       cfg.Logger.With("runner", cfg.Name),
		abort:     make(chan struct{}),
		closeDone: make(chan struct{}),
		procs:     map[*proc]struct{}{},
	}
}

// Start starts the runner now (at boot) instead of on first use, and reports failure.
func (s *Supervisor) Start(ctx context.Context) error {
	_, err := s.get(ctx)
	return err
}

// PID returns the pid of the live runner process (also its process group id), or 0.
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || !s.cur.alive() {
		return 0
	}
	return s.cur.pid
}

// Startable reports whether a call could have a runner process now: nil while one runs
// or one may be started; an error while the configuration is invalid, the supervisor is
// closed, or it waits out the backoff after failed starts. It never starts a process.
func (s *Supervisor) Startable() error {
	if s.cfgErr != nil {
		return s.cfgErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("runner %q: %w", s.cfg.Name, ErrClosed)
	case s.cur != nil && s.cur.alive():
		return nil
	case s.wedged != nil:
		return fmt.Errorf("runner %q: %w; a new process is being started (%v)", s.cfg.Name, ErrUnresponsive, s.wedged)
	case time.Until(s.notBefore) > 0:
		return fmt.Errorf("runner %q: %w (last failure: %v)", s.cfg.Name, ErrBackoff, s.lastErr)
	}
	return nil
}

// Ping checks the live process's health (gRPC health service "plugin" is SERVING). It
// never starts a process.
func (s *Supervisor) Ping(ctx context.Context) error {
	s.mu.Lock()
	p, closed := s.cur, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("runner %q: %w", s.cfg.Name, ErrClosed)
	case p == nil || !p.alive():
		return fmt.Errorf("runner %q: %w", s.cfg.Name, ErrNotRunning)
	}
	if err := p.ping(ctx); err != nil {
		return s.callErr(ctx, p, "health check", err)
	}
	return nil
}

// Describe implements runnerv1.RunnerClient with what the live process reported when it
// started (protocol version checked then); it starts a process if none runs.
func (s *Supervisor) Describe(ctx context.Context, in *runnerv1.DescribeRequest, opts ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	p, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	// Answered from the process's start, where it was asked and checked.
	return proto.CloneOf(p.desc), nil
}

// Summarize implements runnerv1.RunnerClient.
func (s *Supervisor) Summarize(ctx context.Context, in *runnerv1.SummarizeRequest, opts ...grpc.CallOption) (*runnerv1.SummarizeResponse, error) {
	p, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := p.rpc.Summarize(ctx, in, opts...)
	if err != nil {
		return nil, s.callErr(ctx, p, "summarize", err)
	}
	return resp, nil
}

// Call implements runnerv1.RunnerClient.
func (s *Supervisor) Call(ctx context.Context, in *runnerv1.CallRequest, opts ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	p, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := p.rpc.Call(ctx, in, opts...)
	if err != nil {
		return nil, s.callErr(ctx, p, "call "+in.GetMethod(), err)
	}
	return resp, nil
}

// Run implements runnerv1.RunnerClient. Cancelling ctx cancels the remote stream. If the
// process dies, Recv fails promptly with an error wrapping ErrExited (and the gRPC
// status). Read the stream until Recv returns an error, or cancel ctx, to release it.
func (s *Supervisor) Run(ctx context.Context, in *runnerv1.RunRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	st, notSent, err := s.runOn(ctx, in, opts)
	// A run that never reached a runner that died under it goes to a fresh one, once.
	if notSent && ctx.Err() == nil {
		st, _, err = s.runOn(ctx, in, opts)
	}
	return st, err
}

// runOn starts in on the live process; notSent reports a failure before the runner got
// the run.
func (s *Supervisor) runOn(ctx context.Context, in *runnerv1.RunRequest, opts []grpc.CallOption) (st grpc.ServerStreamingClient[runnerv1.RunEvent], notSent bool, err error) {
	p, err := s.get(ctx)
	if err != nil {
		return nil, false, err
	}
	// Tie the run to the process: a broken connection would fail the stream anyway, but
	// a process retired while its socket still answers (failed health checks) would not.
	runCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(p.dead, func() { cancel(context.Cause(p.dead)) })
	// The run counts as in progress on p from here (sending it may already hang on a
	// wedged process) until its stream ends: the stall watchdog looks at such runs.
	p.runs.Add(1)
	p.touch()
	var once sync.Once
	release := func() {
		once.Do(func() {
			p.runs.Add(-1)
			stop()
			cancel(nil)
		})
	}
	if p.lane != nil {
		st, err = p.lane.run(runCtx, in)
	} else {
		st, err = p.rpc.Run(runCtx, in, opts...)
	}
	if err != nil {
		notSent = errors.Is(err, errRunNotSent)
		err = s.callErr(runCtx, p, "run", err)
		release()
		return nil, notSent, err
	}
	return &runStream{ServerStreamingClient: st, s: s, p: p, ctx: runCtx, release: release}, false, nil
}

// runStream translates a run's stream errors and releases the run's context at its end.
type runStream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
	s       *Supervisor
	p       *proc
	ctx     context.Context
	release func()
	once    sync.Once
}

func (r *runStream) Recv() (*runnerv1.RunEvent, error) {
	ev, err := r.ServerStreamingClient.Recv()
	if err == nil {
		r.p.touch()
		return ev, nil
	}
	if err == io.EOF && errors.Is(context.Cause(r.p.dead), ErrUnresponsive) && r.ctx.Err() != nil {
		// The stream was cut because the process stopped responding (a lane may end a
		// cancelled stream as if it had ended): the run did not finish.
		err = r.s.callErr(r.ctx, r.p, "run", context.Cause(r.ctx))
	} else if err != io.EOF {
		err = r.s.callErr(r.ctx, r.p, "run", err)
	}
	r.once.Do(r.release)
	return nil, err
}

// Await forwards to the underlying stream's (see the run lane's), so that a run waiting
// on it needs no goroutine; a stream without one is read by a blocking Recv.
func (r *runStream) Await(ready func()) bool {
	if a, ok := r.ServerStreamingClient.(interface{ Await(func()) bool }); ok {
		return a.Await(ready)
	}
	return true
}

// callErr wraps a call's error. A broken connection means the process is dead or dying:
// it is retired so that the next call starts a fresh one.
func (s *Supervisor) callErr(ctx context.Context, p *proc, op string, err error) error {
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, ErrExited) || errors.Is(cause, ErrClosed) {
			return fmt.Errorf("runner %q: %s: %w", s.cfg.Name, op, cause)
		}
	}
	if cause := context.Cause(p.dead); errors.Is(cause, ErrUnresponsive) {
		// The watchdog retired it; the transport's own error (the run lane's, say) would
		// hide why.
		return fmt.Errorf("runner %q: %s: %w", s.cfg.Name, op, cause)
	}
	if status.Code(err) == codes.Unavailable {
		s.mu.Lock()
		closing := p.closing
		s.mu.Unlock()
		if closing {
			return fmt.Errorf("runner %q: %s: %w: %w", s.cfg.Name, op, ErrClosed, err)
		}
		s.retire(p, "connection lost")
		return fmt.Errorf("runner %q: %s: %w: %w", s.cfg.Name, op, ErrExited, err)
	}
	return fmt.Errorf("runner %q: %s: %w", s.cfg.Name, op, err)
}

// get returns the live process, starting one if needed.
func (s *Supervisor) get(ctx context.Context) (*proc, error) {
	if s.cfgErr != nil {
		return nil, s.cfgErr
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, fmt.Errorf("runner %q: %w", s.cfg.Name, ErrClosed)
		}
		if p := s.cur; p != nil {
			if p.alive() {
				s.mu.Unlock()
				return p, nil
			}
			s.cur = nil
		}
		a := s.attempt
		if a == nil {
			if wait := time.Until(s.notBefore); wait > 0 {
				err := fmt.Errorf("runner %q: %w; next start attempt in %s (last failure: %v)",
					s.cfg.Name, ErrBackoff, wait.Round(time.Millisecond), s.lastErr)
				s.mu.Unlock()
				return nil, err
			}
			a = &attempt{done: make(chan struct{})}
			s.attempt = a
			// The start is not tied to ctx: other callers may be waiting for it too.
			go s.start(a) //nolint:gosec // G118: deliberately detached from the caller's ctx (above)
		}
		s.mu.Unlock()
		select {
		case <-a.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("runner %q: waiting for the runner to start: %w", s.cfg.Name, context.Cause(ctx))
		}
		if a.err != nil {
			return nil, a.err
		}
	}
}

func (s *Supervisor) start(a *attempt) {
	defer close(a.done)
	p, err := s.spawn(s.abort)
	s.mu.Lock()
	s.attempt = nil
	closed := s.closed
	switch {
	case err != nil:
		retry := s.failLocked(err)
		s.mu.Unlock()
		if closed {
			a.err = fmt.Errorf("runner %q: %w", s.cfg.Name, ErrClosed)
			return
		}
		s.log.Error("runner failed to start", "error", err, "next_start_in", retry)
		s.cfg.Events.failed("start_failed")
		a.err = err
		return
	case closed:
		p.closing = true
		s.mu.Unlock()
		p.markDead(ErrClosed)
		p.terminate(context.Background(), s.cfg.KillTimeout)
		a.err = fmt.Errorf("runner %q: %w", s.cfg.Name, ErrClosed)
		return
	}
	s.cur = p
	s.wedged = nil
	s.procs[p] = struct{}{}
	s.mu.Unlock()
	if s.cfg.Events.Started != nil {
		s.cfg.Events.Started()
	}
	go s.monitor(p)
}

// failLocked records a failure and returns the delay before the next start.
func (s *Supervisor) failLocked(err error) time.Duration {
	s.failures++
	d := s.cfg.Backoff.delay(s.failures)
	s.notBefore = time.Now().Add(d)
	s.lastErr = err
	return d
}

// monitor watches one process: its exit (go-plugin's done context) and its health.
func (s *Supervisor) monitor(p *proc) {
	var tick <-chan time.Time
	if s.cfg.HealthInterval > 0 {
		t := time.NewTicker(s.cfg.HealthInterval)
		defer t.Stop()
		tick = t.C
	}
	var stallTick <-chan time.Time
	if s.cfg.StallTimeout > 0 {
		t := time.NewTicker(max(s.cfg.StallTimeout/4, time.Millisecond))
		defer t.Stop()
		stallTick = t.C
	}
	misses := 0
	for {
		select {
		case <-p.exited:
			s.exited(p)
			return
		case <-s.abort:
			return // Close stops the process itself.
		case <-stallTick:
			if p.dead.Err() != nil || p.runs.Load() == 0 || p.sinceActive() < s.cfg.StallTimeout {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.stallPing())
			err := p.ping(ctx)
			cancel()
			if err == nil {
				p.touch() // slow, not stuck: ask again after another stall timeout
				continue
			}
			s.wedge(p, err)
		case <-tick:
			if p.dead.Err() != nil {
				continue // being retired; wait for the exit
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HealthTimeout)
			err := p.ping(ctx)
			cancel()
			if err == nil {
				misses = 0
				continue
			}
			misses++
			p.log.Warn("runner health check failed", "error", err, "misses", misses)
			if misses >= 2 {
				s.retire(p, reasonUnhealthy)
			}
		}
	}
}

// exited accounts for a process that has exited and cleans up after it.
func (s *Supervisor) exited(p *proc) {
	st := p.exitStatus()
	cause := fmt.Errorf("%w (%s)", ErrExited, st)
	s.mu.Lock()
	if s.cur == p {
		s.cur = nil
	}
	crashed := !p.closing
	unhealthy := p.unhealthy
	var retry time.Duration
	if crashed {
		if time.Since(p.started) >= s.cfg.Backoff.Reset {
			s.failures = 0 // it was healthy for a while: restart at once
		}
		retry = s.failLocked(cause)
	}
	s.mu.Unlock()
	p.markDead(cause)
	if crashed {
		reason := "exited"
		if unhealthy {
			reason = "unhealthy"
		}
		s.cfg.Events.failed(reason)
		p.log.Error("runner process exited unexpectedly", "status", st,
			"uptime", time.Since(p.started).Round(time.Millisecond), "next_start_in", retry)
	} else {
		p.log.Info("runner process stopped", "status", st)
	}
	p.terminate(context.Background(), s.cfg.KillTimeout)
	s.forget(p)
}

// stallPing bounds the health check of a process whose runs went silent: the stall
// timeout or the health timeout, whichever is shorter.
func (s *Supervisor) stallPing() time.Duration { return min(s.cfg.StallTimeout, s.cfg.HealthTimeout) }

// wedge retires a process whose runs got no event and which answered no health check
// within the stall timeout: its runs fail with ErrUnresponsive, and a new process is
// started at once rather than by the next call, which would otherwise wait for it.
func (s *Supervisor) wedge(p *proc, pingErr error) {
	reason := fmt.Errorf("no event for %s and no health answer within %s: %w", s.cfg.StallTimeout, s.stallPing(), pingErr)
	s.mu.Lock()
	if s.cur == p {
		s.cur = nil
	}
	closing := p.closing
	if !closing {
		s.wedged = reason
	}
	s.mu.Unlock()
	if closing || p.dead.Err() != nil {
		return
	}
	p.markDead(fmt.Errorf("%w: %v", ErrUnresponsive, reason))
	p.log.Error("runner process stopped responding; replacing it", "stall_timeout", s.cfg.StallTimeout, "error", pingErr)
	// A graceful stop would wait out the kill timeout on a process that answers nothing
	// (SIGTERM is not even delivered to a stopped one): its group is SIGKILLed at once.
	go func() {
		p.hardKill()
		p.terminate(context.Background(), s.cfg.KillTimeout)
	}()
	go func() { _, _ = s.get(context.Background()) }()
}

// reasonUnhealthy retires a process that failed its health checks.
const reasonUnhealthy = "health checks failed"

// retire takes a process out of service and stops it; its exit is then counted as a
// failure by exited.
func (s *Supervisor) retire(p *proc, reason string) {
	s.mu.Lock()
	if s.cur == p {
		s.cur = nil
	}
	closing := p.closing
	if !closing && p.dead.Err() == nil && reason == reasonUnhealthy {
		p.unhealthy = true
	}
	s.mu.Unlock()
	if closing || p.dead.Err() != nil {
		return
	}
	p.markDead(fmt.Errorf("%w: %s", ErrExited, reason))
	p.log.Warn("retiring runner process", "reason", reason)
	go p.terminate(context.Background(), s.cfg.KillTimeout)
}

func (s *Supervisor) forget(p *proc) {
	s.mu.Lock()
	_, had := s.procs[p]
	delete(s.procs, p)
	s.mu.Unlock()
	if had && s.cfg.Events.Stopped != nil {
		s.cfg.Events.Stopped()
	}
}

// Close stops the runner: in-flight runs fail with ErrClosed, the process gets a graceful
// shutdown and, after KillTimeout (or when ctx ends), its whole process group is
// SIGKILLed. Calls after Close fail with ErrClosed. Close is idempotent: later calls wait
// for the first to finish.
func (s *Supervisor) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		select {
		case <-s.closeDone:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("runner %q: close: %w", s.cfg.Name, ctx.Err())
		}
	}
	s.closed = true
	close(s.abort)
	a := s.attempt
	procs := make([]*proc, 0, len(s.procs))
	for p := range s.procs {
		p.closing = true
		procs = append(procs, p)
	}
	s.cur = nil
	s.mu.Unlock()

	var wg sync.WaitGroup
	for _, p := range procs {
		p.markDead(ErrClosed)
		wg.Go(func() {
			p.terminate(ctx, s.cfg.KillTimeout)
			s.forget(p)
		})
	}
	if a != nil {
		// abort makes the start give up and clean up after itself.
		wg.Go(func() {
			select {
			case <-a.done:
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	close(s.closeDone)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("runner %q: close: %w", s.cfg.Name, err)
	}
	s.log.Debug("runner supervisor closed")
	return nil
}
