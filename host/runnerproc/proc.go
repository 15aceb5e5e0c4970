package runnerproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// proc is one runner process.
type proc struct {
	log     hclog.Logger
	pid     int
	started time.Time
	cmd     *exec.Cmd
	client  *plugin.Client
	rpc     runnerv1.RunnerClient
	health  healthpb.HealthClient
	// desc is what the runner reported in Describe when it started.
	desc *runnerv1.DescribeResponse
	// lane carries the process's runs when it serves a run lane; nil: Run calls.
	lane    *lane
	sockDir string
	stderr  *lineLogger
	outputs []*lineLogger

	// exited is go-plugin's done context: closed after the process has been waited for.
	exited <-chan struct{}
	// forked is set when the process was forked from a zygote (Config.Fork); cmd is
	// then only go-plugin's spec and never runs.
	forked *forkRunner
	// hardKill SIGKILLs the process group (for a started command: cancels the exec
	// context, whose Cancel does).
	hardKill func()

	// dead is cancelled (with the reason as cause) once the process must not be used any
	// more; in-flight runs are tied to it.
	dead     context.Context
	markDead context.CancelCauseFunc

	// runs counts the runs in progress on the process; active is when one last got an
	// event or started (unix nanoseconds). The stall watchdog reads both.
	runs   atomic.Int64
	active atomic.Int64

	// closing: the supervisor stops this process on purpose (Close); its exit is no crash.
	closing   bool // guarded by Supervisor.mu
	unhealthy bool // retired for failing health checks; guarded by Supervisor.mu
	killOnce  sync.Once
	killDone  chan struct{}
}

// dispenser is the host-side plugin: the runner plugin's client plus a hook that keeps go-plugin's
// done context (cancelled when the process exits; there is no exit callback, #92) and the
// connection (for a health check that reads SERVING, which go-plugin's Ping ignores, #341).
type dispenser struct {
	runnerplugin.Plugin
	done context.Context
	conn *grpc.ClientConn
}

func (d *dispenser) GRPCClient(ctx context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	d.done, d.conn = ctx, c
	return d.Plugin.GRPCClient(ctx, b, c)
}

// spawn starts a runner process and waits until it serves. abort is closed to give up
// early (Close during a slow start).
func (s *Supervisor) spawn(abort <-chan struct{}) (*proc, error) {
	cfg := &s.cfg
	dir, err := socketDir()
	if err != nil {
		return nil, fmt.Errorf("runner %q: create socket directory: %w", cfg.Name, err)
	}
	execCtx, hardKill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(execCtx, cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	// go-plugin appends its cookie and PLUGIN_* variables; with SkipHostEnv the runner gets
	// cfg.Env and nothing else (the project layer decides what of the shell's is in it).
	cmd.Env = append(append(make([]string, 0, len(cfg.Env)+1), cfg.Env...), plugin.EnvUnixSocketDir+"="+dir)
	// Own process group: the runner's children can be killed with it (go-plugin #136).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}

	log := s.log
	stderr := newLineLogger(log, "stderr", hclog.Debug)
	stdout := newLineLogger(log, "stdout", hclog.Info)
	syncStderr := newLineLogger(log, "stderr", hclog.Info)
	disp := &dispenser{}
	ccfg := &plugin.ClientConfig{
		HandshakeConfig:  runnerplugin.Handshake(),
		Plugins:          plugin.PluginSet{runnerplugin.Name: disp},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     cfg.StartTimeout,
		SkipHostEnv:      true,
		GRPCDialOptions:  runnerplugin.DialOptions(),
		// Level Off disables go-plugin's stderr JSON parser (it can panic the host, #38);
		// our lineLogger gets the raw lines through Stderr instead.
		Logger:     hclog.New(&hclog.LoggerOptions{Name: "go-plugin", Level: hclog.Off, Output: io.Discard}),
		Stderr:     stderr,
		SyncStdout: stdout,
		SyncStderr: syncStderr,
	}
	var forked *forkRunner
	if cfg.Fork != nil {
		forked = newForkRunner(cfg, dir)
		ccfg.Cmd, ccfg.RunnerFunc = nil, forked.runnerFunc
		execKill := hardKill
		hardKill = func() { execKill(); forked.kill() }
	}
	client := plugin.NewClient(ccfg)
	p := &proc{
		log: log, cmd: cmd, forked: forked, client: client, sockDir: dir, stderr: stderr,
		outputs: []*lineLogger{stderr, stdout, syncStderr}, hardKill: hardKill,
		killDone: make(chan struct{}),
	}
	p.dead, p.markDead = context.WithCancelCause(context.Background())

	// go-plugin's Start blocks without a context; abort kills the process group, which
	// makes it return ("plugin exited before we could connect").
	stopAbort := make(chan struct{})
	defer close(stopAbort)
	go func() {
		select {
		case <-abort:
			hardKill()
		case <-stopAbort:
		}
	}()

	t0 := time.Now()
	proto, err := client.Client()
	if err != nil {
		return nil, s.startFailed(p, err)
	}
	raw, err := proto.Dispense(runnerplugin.Name)
	if err != nil {
		return nil, s.startFailed(p, fmt.Errorf("dispense: %w", err))
	}
	rc, ok := raw.(runnerv1.RunnerClient)
	if !ok {
		return nil, s.startFailed(p, fmt.Errorf("dispense: unexpected client type %T", raw))
	}
	p.rpc = rc
	p.exited = disp.done.Done()
	p.health = healthpb.NewHealthClient(disp.conn)
	// client.Client ran cmd.Start (or the fork) on this goroutine, so its pid is safe
	// to read.
	p.pid = p.startedPid()
	p.log = log.With("pid", p.pid)
	for _, o := range p.outputs {
		o.setLogger(p.log)
	}

	hctx, cancel := context.WithTimeout(context.Background(), min(cfg.StartTimeout, cfg.HealthTimeout))
	defer cancel()
	go func() {
		select {
		case <-abort:
			cancel()
		case <-hctx.Done():
		}
	}()
	if err := p.ping(hctx); err != nil {
		return nil, s.startFailed(p, fmt.Errorf("health check: %w", err))
	}
	// The protocol version is checked before any run: a runner built for another
	// version would misread requests instead of failing clearly. A runner may do real
	// work to describe itself (the first import of a large framework's modules): it has
	// what is left of the start timeout, not the health check's few seconds.
	dctx, dcancel := context.WithDeadline(context.Background(), t0.Add(cfg.StartTimeout))
	defer dcancel()
	go func() {
		select {
		case <-abort:
			dcancel()
		case <-dctx.Done():
		}
	}()
	d, err := rc.Describe(dctx, &runnerv1.DescribeRequest{})
	if err != nil {
		return nil, s.startFailed(p, fmt.Errorf("describe: %w", err))
	}
	if d.ProtocolVersion != runnerplugin.Protocol() {
		return nil, s.startFailed(p, &ProtocolError{Runner: cfg.Name, Got: d.ProtocolVersion, Want: runnerplugin.Protocol()})
	}
	p.desc = d
	if path := d.GetRunLane(); path != "" {
		l, err := dialLane(hctx, path, dir, p.log.Named("lane"))
		if err != nil {
			// The runner still serves runs over gRPC: slower, not broken.
			p.log.Warn("runner's run lane unusable; its runs use gRPC calls", "error", err)
		} else {
			p.lane = l
			// A process out of service takes its lane with it (its runs fail with the cause).
			context.AfterFunc(p.dead, func() { l.fail(context.Cause(p.dead)) })
		}
	}
	p.started = time.Now()
	p.log.Info("runner started", "command", cfg.Command[0], "start_ms", float64(p.started.Sub(t0).Microseconds())/1000)
	return p, nil
}

// ProtocolError: the runner speaks another runner protocol version than this host.
type ProtocolError struct {
	Runner    string
	Got, Want string
}

func (e *ProtocolError) Error() string {
	got := e.Got
	if got == "" {
		got = "none"
	}
	return fmt.Sprintf("runner %q speaks runner protocol version %s, this agentengine speaks version %s: rebuild it with the runner SDK that comes with this agentengine (a Go project: `agentengine sdk update DIR` replaces its SDK copy)", e.Runner, got, e.Want)
}

// startFailed cleans up after a failed start and builds the error, quoting the runner's
// last stderr lines: that is where a missing import or a bad config shows.
func (s *Supervisor) startFailed(p *proc, err error) error {
	// Set by cmd.Start or the fork on this goroutine (inside client.Client), so safe
	// to read.
	if pid := p.startedPid(); pid != 0 {
		p.pid = pid
	}
	p.terminate(context.Background(), s.cfg.KillTimeout)
	s.log.Debug("go-plugin start error", "error", err)
	reason := startReason(err, s.cfg.StartTimeout)
	tail := p.stderr.lastLines()
	if why := stderrReason(tail); why != "" {
		reason = why
	} else if len(tail) == 0 && strings.HasPrefix(reason, "the process closed stdout") {
		// Nothing on stderr: most likely a program that never started serving.
		reason += ": a runner serves by calling pluginsdk.Serve in its main (Go) or agentengine_runner.serve " +
			"(Python); a program that returns or exits first never connects"
	}
	if st := p.waitedStatus(); st != "" {
		reason += " (" + st + ")"
	}
	msg := fmt.Sprintf("runner %q: start %s: %s", s.cfg.Name, s.cfg.Command[0], reason)
	if len(tail) > 0 {
		msg += "\nlast stderr lines:\n  " + strings.Join(tail, "\n  ")
	}
	return &startError{msg: msg, err: err}
}

// startReason rewords go-plugin's start errors, whose text is written for plugin authors
// of Go programs (and appends file mode and ELF notes), into what went wrong.
func startReason(err error, timeout time.Duration) string {
	msg := err.Error()
	const unrecognized = "Unrecognized remote plugin message: "
	switch {
	case strings.HasPrefix(msg, unrecognized):
		first, _, _ := strings.Cut(strings.TrimPrefix(msg, unrecognized), "\n")
		if first == "" {
			return "the process closed stdout without the go-plugin handshake line"
		}
		if len(first) > 200 {
			first = strings.ToValidUTF8(first[:200], "") + "…"
		}
		return fmt.Sprintf("the process printed %q to stdout instead of the go-plugin handshake line "+
			"(a runner must not write to stdout before the handshake)", first)
	case msg == "timeout while waiting for plugin to start":
		return fmt.Sprintf("no go-plugin handshake within the start timeout (%s)", timeout)
	case msg == "plugin exited before we could connect":
		return "the process exited before the go-plugin handshake"
	case strings.HasPrefix(msg, "incompatible API version with plugin"), strings.HasPrefix(msg, "incompatible core API version"):
		// go-plugin's words: "Plugin version: 2, Client versions: [1]".
		_, detail, _ := strings.Cut(msg, ". ")
		return fmt.Sprintf("the runner's handshake version does not match this agentengine's (%s): it was built "+
			"against another runner SDK; rebuild it with the pluginsdk that comes with this agentengine "+
			"(a Go project: `agentengine sdk update DIR` replaces its SDK copy)", strings.TrimSpace(detail))
	}
	return msg
}

// cookieMismatch is what go-plugin's Serve writes to stderr when the host's magic
// cookie is not the one the runner was built with.
const cookieMismatch = "This binary is a plugin. These are not meant to be executed directly."

// stderrReason explains a start failure from the runner's last stderr lines, when they
// tell more than the handshake did.
func stderrReason(tail []string) string {
	for _, l := range tail {
		if strings.Contains(l, cookieMismatch) {
			return "the runner's go-plugin handshake (magic cookie) is not agentengine's: it serves with its own " +
				"plugin.HandshakeConfig; serve with pluginsdk.Serve, which uses agentengine's"
		}
	}
	return ""
}

type startError struct {
	msg string
	err error
}

func (e *startError) Error() string { return e.msg }
func (e *startError) Unwrap() error { return e.err }

func (p *proc) ping(ctx context.Context) error {
	resp, err := p.health.Check(ctx, &healthpb.HealthCheckRequest{Service: plugin.GRPCServiceName})
	if err != nil {
		return err
	}
	if st := resp.GetStatus(); st != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("runner reports %s", st)
	}
	return nil
}

// startedPid is the process's pid once client.Client started it, else 0.
func (p *proc) startedPid() int {
	if p.forked != nil {
		return p.forked.pid()
	}
	if p.cmd.Process != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// touch records a sign of life of the process's runs. Signs less than a millisecond
// apart change nothing the stall watchdog (seconds) can see, and storing each would
// bounce the field's cache line between the cores that read runs' events.
func (p *proc) touch() {
	if now := time.Now().UnixNano(); now-p.active.Load() >= int64(time.Millisecond) {
		p.active.Store(now)
	}
}

// sinceActive is how long the process's runs have gone without a sign of life.
func (p *proc) sinceActive() time.Duration {
	return time.Duration(time.Now().UnixNano() - p.active.Load())
}

// alive reports whether the process may take calls.
func (p *proc) alive() bool {
	if p.dead.Err() != nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
	}
	// A killed runner is a zombie a little before go-plugin notices it exited; a call
	// dispatched to it in that window would fail instead of starting a fresh process.
	// A forked one is not our child: its pidfd tells.
	if p.forked != nil {
		return !p.forked.exited()
	}
	return !defunct(p.pid)
}

// terminate stops the process and everything in its process group. It asks nicely first
// (go-plugin Kill: GRPCController.Shutdown, then SIGKILL of the direct child after 2 s)
// and SIGKILLs the whole group when that has not finished within killTimeout or ctx ends:
// go-plugin's Kill waits for the stdout/stderr pipes to close, which never happens while
// a grandchild holds them (research A.8). Safe to call more than once and concurrently.
func (p *proc) terminate(ctx context.Context, killTimeout time.Duration) {
	p.killOnce.Do(func() {
		go func() {
			p.client.Kill()
			close(p.killDone)
		}()
	})
	timer := time.NewTimer(killTimeout)
	defer timer.Stop()
	select {
	case <-p.killDone:
	case <-timer.C:
		p.log.Warn("runner did not exit in time; killing its process group", "kill_timeout", killTimeout)
		p.hardKill()
	case <-ctx.Done():
		p.log.Warn("stop cancelled; killing the runner's process group", "error", ctx.Err())
		p.hardKill()
	}
	select {
	case <-p.killDone:
	case <-ctx.Done():
	case <-time.After(killTimeout):
		// Only a process that left the group (setsid) and kept our pipes gets here.
		p.log.Error("runner pipes still open after SIGKILL of its process group; giving up waiting")
	}
	p.hardKill()
	p.sweep()
}

// sweep kills what is left of the process group (children that closed their pipes and so
// did not hold up Kill) and removes the socket directory.
func (p *proc) sweep() {
	// The group id is the runner's pid (Setpgid). Linux does not reuse a pid while it is
	// still a process group id, so while members remain this only hits them; once the
	// group is empty it fails with ESRCH (barring reuse of the pid by a new group leader
	// in the milliseconds since the exit).
	if p.pid > 0 {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	for _, o := range p.outputs {
		o.flush()
	}
	if p.sockDir != "" {
		_ = os.RemoveAll(p.sockDir)
	}
}

// waitedStatus is the exit status once terminate has seen the process reaped, else "".
func (p *proc) waitedStatus() string {
	select {
	case <-p.killDone:
		// client.Kill returned, so go-plugin's goroutine that ran cmd.Wait has finished.
	default:
		return ""
	}
	if p.forked != nil {
		return p.forked.status()
	}
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return ""
}

// exitStatus describes how the process ended; only valid after exited is closed.
func (p *proc) exitStatus() string {
	if p.forked != nil {
		if st := p.forked.status(); st != "" {
			return st
		}
		return "unknown"
	}
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return "unknown"
}

// socketDir makes a private directory for the runner's unix socket. Socket paths are
// limited to 108 bytes (104 on macOS) and go-plugin adds "/plugin" and ten digits, so a
// long TMPDIR falls back to /tmp (terraform #22198).
func socketDir() (string, error) {
	base := os.TempDir()
	if len(base) > 64 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "ae")
	if err != nil {
		return "", err
	}
	// MkdirTemp already uses 0700; be explicit, the socket must not be reachable by others.
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return filepath.Clean(dir), nil
}
