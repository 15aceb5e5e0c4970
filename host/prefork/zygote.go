// Package prefork starts a Python agent's runner processes by forking them from a parent
// that has already imported the framework and the agent (a zygote, as pre-forking servers
// have), so that an added process costs a fork instead of an interpreter start and the
// imports, and shares the imported code's memory with its siblings.
//
// The zygote is the runner's own command (`python -m agentengine_runner module:attr`)
// started with AGENTENGINE_ZYGOTE_FD naming a unix SOCK_SEQPACKET socket: it imports the
// runner, then forks on request and starts nothing else (no gRPC, no thread: a fork
// copies only the forking thread). A request carries the child's environment and its
// stdout and stderr (SCM_RIGHTS); the child serves like any runner, go-plugin handshake
// on that stdout, so runnerproc attaches to it as to a process it started (Config.Fork).
//
// Lifecycle: the zygote reaps its children and reports each exit. A child has its own
// process group and watches the host, not the zygote: a zygote that dies (kill -9) takes
// no runner with it, and the next Fork starts a new one; a child that outlived its
// zygote is watched through a pidfd instead. Close stops the zygote, not the children
// (their supervisors stop them). A reload builds a new pool with a new Zygote, which
// imports the new code.
package prefork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// EnvFD names the zygote's control socket's descriptor in its environment.
const EnvFD = "AGENTENGINE_ZYGOTE_FD"

// Config describes the zygote.
type Config struct {
	// Command, Dir and Env are the runner's (as runnerproc.Config has them).
	Command []string
	Dir     string
	Env     []string
	// StartTimeout bounds the zygote's imports (default 2 minutes).
	StartTimeout time.Duration
	Logger       hclog.Logger
}

// Zygote forks runner processes. Safe for concurrent use; it starts the zygote process
// on the first Fork.
type Zygote struct {
	cfg Config
	log hclog.Logger

	mu     sync.Mutex
	cur    *zproc
	closed bool
	// starting is the start in progress; every Fork that needs the zygote waits for it.
	starting chan struct{}
	startErr error
}

// New returns a zygote that starts on the first Fork.
func New(cfg Config) *Zygote {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Zygote{cfg: cfg, log: cfg.Logger}
}

// ErrClosed: Fork after Close.
var ErrClosed = errors.New("zygote closed")

// zproc is one zygote process.
type zproc struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	log    hclog.Logger
	tail   *tail
	exited chan struct{} // closed after cmd.Wait
	// dead is closed once the control socket is gone (the zygote exited or hung up).
	dead chan struct{}

	reqMu   sync.Mutex // one fork request at a time
	lastID  uint64     // guarded by reqMu
	replies chan reply

	mu       sync.Mutex
	children map[int]*Child
}

type reply struct {
	id  uint64
	pid int
	err error
}

type message struct {
	Ready  int    `json:"ready"`
	PID    int    `json:"pid"`
	Error  string `json:"error"`
	Exit   int    `json:"exit"`
	Status string `json:"status"`
	ID     uint64 `json:"id"`
}

// Fork starts a runner process with env as its environment, its stdout and stderr
// written to the given files. It starts the zygote first if none runs.
func (z *Zygote) Fork(ctx context.Context, env []string, stdout, stderr *os.File) (*Child, error) {
	zp, err := z.get(ctx)
	if err != nil {
		return nil, err
	}
	c, err := zp.fork(ctx, z.cfg.Dir, env, stdout, stderr)
	if err != nil && errors.Is(err, errZygoteGone) {
		// Killed between get and the request: one more try with a new zygote.
		if zp, err = z.get(ctx); err == nil {
			c, err = zp.fork(ctx, z.cfg.Dir, env, stdout, stderr)
		}
	}
	return c, err
}

// PID returns the live zygote's pid, or 0.
func (z *Zygote) PID() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cur == nil || z.cur.gone() {
		return 0
	}
	return z.cur.cmd.Process.Pid
}

func (z *Zygote) get(ctx context.Context) (*zproc, error) {
	for {
		z.mu.Lock()
		if z.closed {
			z.mu.Unlock()
			return nil, ErrClosed
		}
		if zp := z.cur; zp != nil && !zp.gone() {
			z.mu.Unlock()
			return zp, nil
		}
		if z.cur != nil {
			z.log.Warn("zygote exited; starting a new one", "status", z.cur.status())
			z.cur = nil
		}
		wait := z.starting
		if wait == nil {
			wait = make(chan struct{})
			z.starting = wait
			go z.start(wait) //nolint:gosec // G118: shared by every waiting Fork, not tied to one ctx
		}
		z.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the zygote: %w", context.Cause(ctx))
		}
		z.mu.Lock()
		err := z.startErr
		z.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

func (z *Zygote) start(done chan struct{}) {
	zp, err := z.spawn()
	z.mu.Lock()
	defer close(done)
	defer z.mu.Unlock()
	z.starting = nil
	z.startErr = err
	if err != nil {
		return
	}
	if z.closed {
		go zp.stop(context.Background())
		z.startErr = ErrClosed
		return
	}
	z.cur = zp
}

func (z *Zygote) spawn() (*zproc, error) {
	cfg := z.cfg
	if len(cfg.Command) == 0 {
		return nil, errors.New("zygote: no command")
	}
	fds, err := socketpair()
	if err != nil {
		return nil, fmt.Errorf("zygote: socketpair: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "zygote-ctrl"), os.NewFile(uintptr(fds[1]), "zygote-ctrl-child")
	defer func() { _ = theirs.Close() }()
	fc, err := net.FileConn(mine)
	_ = mine.Close()
	if err != nil {
		return nil, fmt.Errorf("zygote: control socket: %w", err)
	}
	conn := fc.(*net.UnixConn)

	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	// ExtraFiles[0] is fd 3 in the child.
	cmd.Env = append(append([]string(nil), cfg.Env...), EnvFD+"=3")
	cmd.ExtraFiles = []*os.File{theirs}
	// Own process group, as every runner has; the children make their own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := z.log.Named("zygote")
	zp := &zproc{
		cmd: cmd, conn: conn, log: log, tail: &tail{}, exited: make(chan struct{}), dead: make(chan struct{}),
		replies: make(chan reply, 16), children: map[int]*Child{},
	}
	out := &logWriter{log: log, tail: zp.tail}
	cmd.Stdout, cmd.Stderr = out, out
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("zygote: start %s: %w", cfg.Command[0], err)
	}
	go func() {
		_ = cmd.Wait()
		out.flush()
		close(zp.exited)
		// A zygote that exited without hanging up (its socket inherited somewhere)
		// is gone all the same.
		_ = conn.Close()
	}()

	ready := make(chan error, 1)
	go zp.read(ready)
	timer := time.NewTimer(cfg.StartTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("no ready message within %s", cfg.StartTimeout)
	}
	if err != nil {
		zp.kill()
		<-zp.exited
		msg := fmt.Sprintf("zygote: start %s: %v (%s)", cfg.Command[0], err, zp.status())
		if lines := zp.tail.lines(); len(lines) > 0 {
			msg += "\nlast stderr lines:\n  " + strings.Join(lines, "\n  ")
		}
		return nil, errors.New(msg)
	}
	log.Info("zygote ready", "pid", cmd.Process.Pid, "start_ms", time.Since(t0).Milliseconds())
	return zp, nil
}

var errZygoteGone = errors.New("zygote exited")

// read dispatches the zygote's messages until its socket closes; the first is "ready".
func (zp *zproc) read(ready chan<- error) {
	defer close(zp.dead)
	buf := make([]byte, 64<<10)
	first := true
	for {
		n, err := zp.conn.Read(buf)
		if err != nil || n == 0 {
			if first {
				ready <- errors.New("the zygote exited before it was ready")
			}
			zp.mu.Lock()
			orphans := make([]*Child, 0, len(zp.children))
			for _, c := range zp.children {
				orphans = append(orphans, c)
			}
			zp.children = map[int]*Child{}
			zp.mu.Unlock()
			for _, c := range orphans {
				c.orphaned()
			}
			return
		}
		var m message
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			zp.log.Error("unreadable zygote message", "error", err)
			continue
		}
		switch {
		case first:
			first = false
			if m.Ready == 0 {
				ready <- fmt.Errorf("unexpected first message %q", buf[:n])
				continue
			}
			ready <- nil
		case m.Exit != 0:
			zp.mu.Lock()
			c := zp.children[m.Exit]
			delete(zp.children, m.Exit)
			zp.mu.Unlock()
			if c != nil {
				c.exit(m.Status)
			}
		case m.PID != 0:
			c := newChild(m.PID)
			zp.mu.Lock()
			zp.children[m.PID] = c
			zp.mu.Unlock()
			zp.reply(reply{id: m.ID, pid: m.PID})
		case m.Error != "":
			zp.reply(reply{id: m.ID, err: errors.New(m.Error)})
		}
	}
}

// reply hands a fork's answer to the request waiting for it; one nobody waits for any
// more (its Fork gave up) is a child to kill.
func (zp *zproc) reply(r reply) {
	select {
	case zp.replies <- r:
	default:
		if r.pid > 0 {
			_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		}
	}
}

func (zp *zproc) fork(ctx context.Context, dir string, env []string, stdout, stderr *os.File) (*Child, error) {
	zp.reqMu.Lock()
	defer zp.reqMu.Unlock()
	zp.lastID++
	id := zp.lastID
	req, err := json.Marshal(struct {
		ID  uint64   `json:"id"`
		Env []string `json:"env"`
		Dir string   `json:"dir,omitempty"`
	}{id, env, dir})
	if err != nil {
		return nil, err
	}
	rights := unix.UnixRights(int(stdout.Fd()), int(stderr.Fd()))
	if _, _, err := zp.conn.WriteMsgUnix(req, rights, nil); err != nil {
		return nil, fmt.Errorf("%w: %w", errZygoteGone, err)
	}
	for {
		select {
		case r := <-zp.replies:
			if r.id != id {
				// The answer to a request whose Fork gave up.
				if r.pid > 0 {
					_ = syscall.Kill(-r.pid, syscall.SIGKILL)
				}
				continue
			}
			return zp.forked(r)
		case <-zp.dead:
			return nil, errZygoteGone
		case <-ctx.Done():
			// The answer, if it comes, is killed when the next request sees it.
			return nil, context.Cause(ctx)
		}
	}
}

func (zp *zproc) forked(r reply) (*Child, error) {
	{
		if r.err != nil {
			return nil, fmt.Errorf("zygote: fork: %w", r.err)
		}
		zp.mu.Lock()
		c := zp.children[r.pid]
		zp.mu.Unlock()
		if c == nil {
			// Exited (and reported) already: a child made just for it.
			c = newChild(r.pid)
			c.exit("")
		}
		c.watch()
		return c, nil
	}
}

func (zp *zproc) gone() bool {
	select {
	case <-zp.dead:
		return true
	default:
		return false
	}
}

func (zp *zproc) status() string {
	select {
	case <-zp.exited:
		if st := zp.cmd.ProcessState; st != nil {
			return st.String()
		}
	default:
	}
	return "running"
}

func (zp *zproc) kill() {
	if zp.cmd.Process != nil {
		_ = syscall.Kill(-zp.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// stop hangs up (the zygote exits when its socket closes) and kills its group if it has
// not exited within a second or when ctx ends.
func (zp *zproc) stop(ctx context.Context) {
	_ = zp.conn.Close()
	select {
	case <-zp.exited:
		return
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	zp.kill()
	<-zp.exited
}

// Close stops the zygote. Processes it forked are not touched: their supervisors stop
// them.
func (z *Zygote) Close(ctx context.Context) error {
	z.mu.Lock()
	z.closed = true
	zp := z.cur
	z.cur = nil
	z.mu.Unlock()
	if zp != nil {
		zp.stop(ctx)
	}
	return nil
}

// Child is a process the zygote forked.
type Child struct {
	pid int
	// pidfd refers to the process while watch waits on it (-1: none); fdMu keeps Exited
	// from polling it once watch has closed it.
	fdMu  sync.RWMutex
	pidfd int
	// gone: watch saw the exit (the zygote's report with the status may follow).
	gone   atomic.Bool
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	st     string
	orphan chan struct{} // closed when the zygote will report no exit
	oonce  sync.Once
	wonce  sync.Once
}

func newChild(pid int) *Child {
	return &Child{pid: pid, pidfd: -1, done: make(chan struct{}), orphan: make(chan struct{})}
}

// Pid returns the process id (also its process group id).
func (c *Child) Pid() int { return c.pid }

// Done is closed once the process has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status says how it exited, "" while it runs or when the zygote did not see it exit
// (it had died first).
func (c *Child) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

func (c *Child) exit(status string) {
	c.once.Do(func() {
		c.mu.Lock()
		c.st = status
		c.mu.Unlock()
		close(c.done)
	})
}

func (c *Child) orphaned() { c.oonce.Do(func() { close(c.orphan) }) }

// Exited reports whether the process has exited, a zombie not reaped yet included: the
// host asks before every call, and the zygote's report comes a little later. One poll.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
	}
	if c.gone.Load() {
		return true
	}
	c.fdMu.RLock()
	defer c.fdMu.RUnlock()
	if c.pidfd < 0 {
		return false
	}
	return pidfdExited(c.pidfd)
}

// watch notices the exit of a child whose zygote is gone (nobody reports it then, and
// nobody may reap it: a zombie counts as exited). While the zygote lives, its report
// (with the status) is awaited first.
func (c *Child) watch() {
	c.wonce.Do(func() {
		c.pidfd = openPidfd(c.pid)
		go func() {
			waitExit(c.pid, c.pidfd)
			c.gone.Store(true)
			c.fdMu.Lock()
			closePidfd(c.pidfd)
			c.pidfd = -1
			c.fdMu.Unlock()
			select {
			case <-c.done:
			case <-c.orphan:
				c.exit("")
			case <-time.After(time.Second):
				c.exit("")
			}
		}()
	})
}

// tail keeps the zygote's last output lines for a start error.
type tail struct {
	mu sync.Mutex
	l  []string
}

func (t *tail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	t.l = append(t.l, s)
	if len(t.l) > 20 {
		t.l = t.l[len(t.l)-20:]
	}
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.l...)
}

// logWriter logs the zygote's output line by line: its hclog JSON lines at their level,
// anything else (an import-time print) at debug.
type logWriter struct {
	log  hclog.Logger
	tail *tail
	mu   sync.Mutex
	buf  []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
}

func (w *logWriter) line(s string) {
	s = strings.TrimRight(s, "\r")
	if s == "" {
		return
	}
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		w.tail.add(s)
		w.log.Debug(s)
		return
	}
	msg, _ := m["@message"].(string)
	lvl, _ := m["@level"].(string)
	args := make([]any, 0, 2*len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "@") {
			args = append(args, k, v)
		}
	}
	w.tail.add(msg)
	if e, ok := m["error"].(string); ok {
		w.tail.add(e)
	}
	switch hclog.LevelFromString(lvl) {
	case hclog.Error:
		w.log.Error(msg, args...)
	case hclog.Warn:
		w.log.Warn(msg, args...)
	case hclog.Info:
		w.log.Info(msg, args...)
	default:
		w.log.Debug(msg, args...)
	}
}

var _ io.Writer = (*logWriter)(nil)
