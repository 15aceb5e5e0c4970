package runnerproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
)

// ForkFunc starts a runner process by forking it: with env as its whole environment, its
// stdout and stderr written to the given files (the caller closes its copies once
// ForkFunc returns). host/prefork's Zygote.Fork is one.
type ForkFunc func(ctx context.Context, env []string, stdout, stderr *os.File) (Forked, error)

// Forked is a process ForkFunc started.
type Forked interface {
	Pid() int
	// Done is closed once the process has exited.
	Done() <-chan struct{}
	// Status says how it exited ("exit status 1", "signal: killed"); "" while it runs
	// or when nobody could tell.
	Status() string
	// Exited reports whether it has exited, a zombie not reaped yet included; asked
	// before every call, so it must be cheap.
	Exited() bool
}

// forkRunner is go-plugin's runner.Runner for a forked process: go-plugin reads the
// handshake from its stdout and logs its stderr as from a process it started itself.
type forkRunner struct {
	fork    ForkFunc
	base    []string // Config.Env
	sockDir string
	name    string

	mu             sync.Mutex
	env            []string
	child          Forked
	stdout, stderr *os.File
}

var _ runner.Runner = (*forkRunner)(nil)

func newForkRunner(cfg *Config, sockDir string) *forkRunner {
	return &forkRunner{fork: cfg.Fork, base: cfg.Env, sockDir: sockDir, name: cfg.Command[0] + " (forked)"}
}

// runnerFunc is go-plugin's ClientConfig.RunnerFunc: cmd carries only the variables
// go-plugin adds (cookie, protocol versions, its own socket directory).
func (r *forkRunner) runnerFunc(_ hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
	env := make([]string, 0, len(r.base)+len(cmd.Env)+1)
	env = append(env, r.base...)
	for _, kv := range cmd.Env {
		// The socket directory is the supervisor's, as for a started command: the run
		// lane must be in it.
		if !strings.HasPrefix(kv, plugin.EnvUnixSocketDir+"=") {
			env = append(env, kv)
		}
	}
	r.env = append(env, plugin.EnvUnixSocketDir+"="+r.sockDir)
	return r, nil
}

func (r *forkRunner) Start(ctx context.Context) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return err
	}
	child, err := r.fork(ctx, r.env, outW, errW)
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		return fmt.Errorf("fork: %w", err)
	}
	r.mu.Lock()
	r.child, r.stdout, r.stderr = child, outR, errR
	r.mu.Unlock()
	return nil
}

func (r *forkRunner) forked() Forked {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.child
}

func (r *forkRunner) pid() int {
	if c := r.forked(); c != nil {
		return c.Pid()
	}
	return 0
}

func (r *forkRunner) status() string {
	c := r.forked()
	if c == nil {
		return ""
	}
	select {
	case <-c.Done():
		return c.Status()
	default:
		return ""
	}
}

// exited reports whether the forked process has exited (see proc.alive).
func (r *forkRunner) exited() bool {
	c := r.forked()
	return c != nil && c.Exited()
}

// kill SIGKILLs the process's group (the child made its own, as a started command's is).
func (r *forkRunner) kill() {
	if pid := r.pid(); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (r *forkRunner) Diagnose(context.Context) string { return "" }
func (r *forkRunner) Stdout() io.ReadCloser           { return r.stdout }
func (r *forkRunner) Stderr() io.ReadCloser           { return r.stderr }
func (r *forkRunner) Name() string                    { return r.name }

func (r *forkRunner) ID() string {
	if pid := r.pid(); pid > 0 {
		return strconv.Itoa(pid)
	}
	return ""
}

// Wait waits for the exit; like exec's Wait it fails for anything but a clean one.
func (r *forkRunner) Wait(ctx context.Context) error {
	c := r.forked()
	if c == nil {
		return errors.New("not started")
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if st := c.Status(); st != "exit status 0" {
		if st == "" {
			st = "exit status unknown"
		}
		return errors.New(st)
	}
	return nil
}

func (r *forkRunner) Kill(context.Context) error {
	r.kill()
	return nil
}

func (r *forkRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *forkRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
